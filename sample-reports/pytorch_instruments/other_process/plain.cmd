python3 /work/main/tests/gpu/pytorch/other_process.py 
