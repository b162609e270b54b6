ncu --import /root/out/cap/async_loads/ncu-async_loads.ncu-rep --csv --page raw --print-units base 
