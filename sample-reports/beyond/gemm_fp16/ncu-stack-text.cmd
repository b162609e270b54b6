ncu --import /tmp/w4/beyond/gemm_fp16/ncu.ncu-rep --page details --print-details all --print-units base 
