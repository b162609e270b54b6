python3 /work/main/tests/gpu/beyond/compiled_inference.py 
