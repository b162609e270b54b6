env CUDA_LAUNCH_BLOCKING=1 /tmp/cap/.bin/uninit_read 
