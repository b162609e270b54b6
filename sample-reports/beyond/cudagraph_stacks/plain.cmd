python3 /work/main/tests/gpu/beyond/compiled_cudagraphs.py 
