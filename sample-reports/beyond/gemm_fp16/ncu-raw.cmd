ncu --import /tmp/w4/beyond/gemm_fp16/ncu.ncu-rep --csv --page raw --print-units base 
