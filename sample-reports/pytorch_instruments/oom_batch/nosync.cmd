python3 /work/main/tests/gpu/pytorch/oom_batch.py 
