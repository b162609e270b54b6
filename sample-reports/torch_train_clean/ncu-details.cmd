ncu --import /tmp/cap/torch_train_clean/ncu.ncu-rep --csv --page details --print-units base 
