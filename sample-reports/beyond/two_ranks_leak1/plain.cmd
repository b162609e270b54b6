python3 /work/main/tests/gpu/beyond/two_ranks.py 
