env CUDA_LAUNCH_BLOCKING=1 /tmp/w/cap/.bin/cutlass_style_race 
