python3 /work/main/tests/gpu/beyond/compile_csan.py 
