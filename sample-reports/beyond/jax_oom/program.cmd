python3 /work/main/tests/gpu/beyond/jax_oom.py 
