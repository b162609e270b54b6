env CUDA_LAUNCH_BLOCKING=1 python3 ddp_step.py 
