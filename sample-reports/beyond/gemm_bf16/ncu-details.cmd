ncu --import /tmp/w4/beyond/gemm_bf16/ncu.ncu-rep --csv --page details --print-units base 
