python3 /work/main/tests/gpu/pytorch/pinned_nonblocking.py 
