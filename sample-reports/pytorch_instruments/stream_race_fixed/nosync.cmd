python3 /work/main/tests/gpu/pytorch/stream_race_fixed.py 
