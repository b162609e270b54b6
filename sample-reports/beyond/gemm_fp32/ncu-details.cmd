ncu --import /tmp/w4/beyond/gemm_fp32/ncu.ncu-rep --csv --page details --print-units base 
