ncu --import /tmp/w9/beyond/gemm_triton/ncu.ncu-rep --page details --print-details all --print-units base 
