env CUDA_LAUNCH_BLOCKING=1 /root/out/cap/.bin/fill_then_read 
