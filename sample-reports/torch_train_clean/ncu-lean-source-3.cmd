ncu --import /tmp/cap/torch_train_clean/ncu-lean.ncu-rep --csv --page source --print-source cuda\,sass --print-units base --launch-skip 3 --launch-count 1 
