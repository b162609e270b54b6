nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/uninit_read /work/main/tests/gpu/uninit_read.cu 
