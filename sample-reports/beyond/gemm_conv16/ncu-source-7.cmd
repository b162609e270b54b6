ncu --import /tmp/w4/beyond/gemm_conv16/ncu.ncu-rep --csv --page source --print-source cuda\,sass --print-units base --launch-skip 7 --launch-count 1 
