ncu --import /tmp/cap/torch_train_clean/ncu-lean.ncu-rep --csv --page raw --print-units base 
