ncu --import /tmp/st/library_kernels/ncu-stack-lean.ncu-rep --page details --print-details all --print-units base 
