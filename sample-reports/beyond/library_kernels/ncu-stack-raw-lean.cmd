ncu --import /tmp/st/library_kernels/ncu-stack-lean.ncu-rep --csv --page raw --print-units base 
