env CUDA_LAUNCH_BLOCKING=1 /tmp/cap/.bin/coalescing 
