ncu --import /root/out/cap/async_loads/ncu-matmul.ncu-rep --csv --page raw --print-units base 
