env CUDA_LAUNCH_BLOCKING=1 /tmp/beyond/.bin/alloc_probe 
