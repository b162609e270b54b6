nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/hang_after_error /work/main/tests/gpu/hang_after_error.cu 
