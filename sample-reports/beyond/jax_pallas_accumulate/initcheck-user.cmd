compute-sanitizer --tool initcheck python3 /work/main/tests/gpu/beyond/jax_pallas_accumulate.py 
