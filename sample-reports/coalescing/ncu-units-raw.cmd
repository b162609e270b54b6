ncu --import /tmp/cap/coalescing/ncu-units.ncu-rep --csv --page raw 
