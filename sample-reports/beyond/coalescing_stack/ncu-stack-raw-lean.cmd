ncu --import /tmp/st/coalescing_stack/ncu-stack-lean.ncu-rep --csv --page raw --print-units base 
