ncu --import /tmp/cap/coalescing/ncu-lean.ncu-rep --csv --page raw --print-units base 
