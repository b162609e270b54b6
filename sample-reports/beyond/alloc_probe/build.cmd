nvcc -lineinfo -arch=sm_90 -o /tmp/beyond/.bin/alloc_probe /work/main/tests/gpu/beyond/alloc_probe.cu 
