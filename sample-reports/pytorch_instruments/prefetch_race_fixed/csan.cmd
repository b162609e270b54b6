env TORCH_CUDA_SANITIZER=1 python3 /work/main/tests/gpu/pytorch/prefetch_race_fixed.py 
