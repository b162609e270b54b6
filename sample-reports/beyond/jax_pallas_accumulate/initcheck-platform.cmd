env XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_PYTHON_CLIENT_PREALLOCATE=false compute-sanitizer --tool initcheck python3 /work/main/tests/gpu/beyond/jax_pallas_accumulate.py 
