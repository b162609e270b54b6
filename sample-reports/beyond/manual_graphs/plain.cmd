python3 /work/main/tests/gpu/real/cudagraph_step.py 
