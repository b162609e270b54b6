compute-sanitizer --tool memcheck python3 /work/main/tests/gpu/beyond/jax_step.py 
