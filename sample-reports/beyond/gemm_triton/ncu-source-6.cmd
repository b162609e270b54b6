ncu --import /tmp/w9/beyond/gemm_triton/ncu.ncu-rep --csv --page source --print-source cuda\,sass --print-units base --launch-skip 6 --launch-count 1 
