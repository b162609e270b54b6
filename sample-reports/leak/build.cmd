nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/leak /work/main/tests/gpu/leak.cu 
