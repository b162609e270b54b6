env CUDA_LAUNCH_BLOCKING=1 /tmp/beyond/.bin/unrolled_uninit 
