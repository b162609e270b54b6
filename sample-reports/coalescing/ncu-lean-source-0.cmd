ncu --import /tmp/cap/coalescing/ncu-lean.ncu-rep --csv --page source --print-source cuda\,sass --print-units base --launch-skip 0 --launch-count 1 
