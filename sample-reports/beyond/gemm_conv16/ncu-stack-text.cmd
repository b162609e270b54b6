ncu --import /tmp/w4/beyond/gemm_conv16/ncu.ncu-rep --page details --print-details all --print-units base 
