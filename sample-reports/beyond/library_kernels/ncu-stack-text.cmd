ncu --import /tmp/beyond/library_kernels/ncu-stack.ncu-rep --page details --print-details all -c 3 
