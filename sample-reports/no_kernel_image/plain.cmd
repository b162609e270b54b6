env CUDA_LAUNCH_BLOCKING=1 /tmp/cap/.bin/no_kernel_image 
