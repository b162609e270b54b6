nvcc -lineinfo -arch=sm_90 -o /tmp/beyond/.bin/inlined_syncwarp /work/main/tests/gpu/beyond/inlined_syncwarp.cu 
