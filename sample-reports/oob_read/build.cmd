nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/oob_read /work/main/tests/gpu/oob_read.cu 
