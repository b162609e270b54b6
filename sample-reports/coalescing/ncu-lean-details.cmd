ncu --import /tmp/cap/coalescing/ncu-lean.ncu-rep --csv --page details --print-units base 
