ncu --import /tmp/w4/beyond/gemm_sdpa/ncu.ncu-rep --csv --page source --print-source cuda\,sass --print-units base --launch-skip 5 --launch-count 1 
