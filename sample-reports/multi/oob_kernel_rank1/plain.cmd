env CUDA_LAUNCH_BLOCKING=1 torchrun --standalone --nproc_per_node=2 oob_kernel_rank1.py 
