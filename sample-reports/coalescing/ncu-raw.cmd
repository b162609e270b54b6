ncu --import /tmp/cap/coalescing/ncu.ncu-rep --csv --page raw --print-units base 
