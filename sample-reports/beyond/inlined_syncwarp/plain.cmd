env CUDA_LAUNCH_BLOCKING=1 /tmp/beyond/.bin/inlined_syncwarp 
