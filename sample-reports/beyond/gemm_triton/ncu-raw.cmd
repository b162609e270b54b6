ncu --import /tmp/w9/beyond/gemm_triton/ncu.ncu-rep --csv --page raw --print-units base 
