ncu --import /tmp/beyond/coalescing_stack/ncu-stack.ncu-rep --csv --page details --print-units base --print-details all 
