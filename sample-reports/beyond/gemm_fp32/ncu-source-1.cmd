ncu --import /tmp/w4/beyond/gemm_fp32/ncu.ncu-rep --csv --page source --print-source cuda\,sass --print-units base --launch-skip 1 --launch-count 1 
