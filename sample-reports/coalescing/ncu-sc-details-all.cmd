ncu --import /tmp/cap/coalescing/ncu-sc.ncu-rep --csv --page details --print-details all 
