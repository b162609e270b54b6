nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/coalescing /work/main/tests/gpu/coalescing.cu 
