ncu --import /tmp/beyond/library_kernels/ncu-stack.ncu-rep --page session --csv 
