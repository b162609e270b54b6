env CUDA_LAUNCH_BLOCKING=1 /tmp/cap/.bin/divergent_barrier 
