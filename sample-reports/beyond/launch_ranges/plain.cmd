env CUDA_LAUNCH_BLOCKING=1 python3 /work/main/tests/gpu/real/resnet_step.py 
