env CUDA_LAUNCH_BLOCKING=1 /tmp/cap/.bin/device_assert 
