ncu --import /tmp/w4/beyond/gemm_bf16/ncu.ncu-rep --csv --page source --print-source cuda\,sass --print-units base --launch-skip 4 --launch-count 1 
