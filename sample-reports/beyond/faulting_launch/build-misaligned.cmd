nvcc -lineinfo -arch=sm_90 -o /root/out/cap/.bin/misaligned /work/main/tests/gpu/misaligned.cu 
