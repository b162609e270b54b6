env XLA_FLAGS=--xla_gpu_autotune_level=0 compute-sanitizer --tool memcheck python3 /work/main/tests/gpu/beyond/jax_step.py 
