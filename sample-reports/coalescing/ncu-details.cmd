ncu --import /tmp/cap/coalescing/ncu.ncu-rep --csv --page details --print-units base 
