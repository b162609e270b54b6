ncu --import /tmp/beyond/coalescing_stack/ncu-stack.ncu-rep --csv --page raw --print-units base 
