env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 /work/main/tests/gpu/pytorch/fragmentation.py 
