nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/oob_write /work/main/tests/gpu/oob_write.cu 
