env CUDA_LAUNCH_BLOCKING=1 torchrun --nproc_per_node=1 ddp_step.py 
