compute-sanitizer --tool initcheck python3 /work/main/tests/gpu/beyond/gemm_output_read.py triton 
