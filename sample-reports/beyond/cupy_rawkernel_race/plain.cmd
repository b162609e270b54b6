env CUDA_LAUNCH_BLOCKING=1 python3 /work/main/tests/gpu/beyond/cupy_rawkernel_race.py 
