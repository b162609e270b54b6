env CUDA_LAUNCH_BLOCKING=1 python3 /work/main/tests/gpu/pytorch/sparse_race.py 
