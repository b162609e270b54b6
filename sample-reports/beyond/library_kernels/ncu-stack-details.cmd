ncu --import /tmp/beyond/library_kernels/ncu-stack.ncu-rep --csv --page details --print-units base --print-details all 
