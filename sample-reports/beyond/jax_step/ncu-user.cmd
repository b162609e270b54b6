ncu --metrics gpu__time_duration.sum python3 /work/main/tests/gpu/beyond/jax_step.py 
