ncu --import /tmp/cap/torch_train_clean/ncu-lean.ncu-rep --csv --page details --print-units base 
