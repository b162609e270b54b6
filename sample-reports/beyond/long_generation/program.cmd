python3 /work/main/tests/gpu/beyond/long_generation.py 
