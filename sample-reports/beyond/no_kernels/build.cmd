nvcc -lineinfo -arch=sm_90 -o /tmp/beyond/.bin/no_kernels /work/main/tests/gpu/beyond/no_kernels.cu 
