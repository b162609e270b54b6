ncu --import /tmp/beyond/library_kernels/ncu-stack.ncu-rep --csv --page raw --print-units base 
