env CUDA_LAUNCH_BLOCKING=1 /tmp/fin/cap/.bin/two_bugs 
