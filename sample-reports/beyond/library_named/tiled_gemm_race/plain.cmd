env CUDA_LAUNCH_BLOCKING=1 /tmp/w/cap/.bin/tiled_gemm_race 
