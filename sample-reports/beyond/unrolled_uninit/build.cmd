nvcc -lineinfo -arch=sm_90 -o /tmp/beyond/.bin/unrolled_uninit /work/main/tests/gpu/beyond/unrolled_uninit.cu 
