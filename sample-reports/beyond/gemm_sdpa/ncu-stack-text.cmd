ncu --import /tmp/w4/beyond/gemm_sdpa/ncu.ncu-rep --page details --print-details all --print-units base 
