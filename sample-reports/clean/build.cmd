nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/clean /work/main/tests/gpu/clean.cu 
