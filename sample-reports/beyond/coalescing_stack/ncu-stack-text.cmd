ncu --import /tmp/st/coalescing_stack/ncu-stack-lean.ncu-rep --page details --print-details all --print-units base 
