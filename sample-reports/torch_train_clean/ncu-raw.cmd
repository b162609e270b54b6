ncu --import /tmp/cap/torch_train_clean/ncu.ncu-rep --csv --page raw --print-units base 
