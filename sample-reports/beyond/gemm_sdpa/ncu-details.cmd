ncu --import /tmp/w4/beyond/gemm_sdpa/ncu.ncu-rep --csv --page details --print-units base 
