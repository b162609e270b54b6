nvcc -lineinfo -arch=sm_90 -o /root/out/cap/.bin/fill_then_read /work/main/tests/gpu/beyond/fill_then_read.cu 
