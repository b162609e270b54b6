nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/divergent_barrier /work/main/tests/gpu/divergent_barrier.cu 
