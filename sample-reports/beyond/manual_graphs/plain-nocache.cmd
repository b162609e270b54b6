env PYTORCH_NO_CUDA_MEMORY_CACHING=1 python3 /work/main/tests/gpu/real/cudagraph_step.py 
