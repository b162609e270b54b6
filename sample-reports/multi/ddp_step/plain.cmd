env CUDA_LAUNCH_BLOCKING=1 torchrun --standalone --nproc_per_node=2 ddp_step.py 
