env MARGIN_MIB=128 HOLDER=other PYTORCH_NO_CUDA_MEMORY_CACHING=1 python3 /work/main/tests/gpu/beyond/crowded_gpu.py 
