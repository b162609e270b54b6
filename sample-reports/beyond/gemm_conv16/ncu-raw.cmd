ncu --import /tmp/w4/beyond/gemm_conv16/ncu.ncu-rep --csv --page raw --print-units base 
