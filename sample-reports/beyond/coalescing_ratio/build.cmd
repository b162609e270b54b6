nvcc -lineinfo -arch=sm_90 -o /tmp/b3/.bin/coalescing /work/main/tests/gpu/coalescing.cu 
