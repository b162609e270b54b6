nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/misaligned /work/main/tests/gpu/misaligned.cu 
