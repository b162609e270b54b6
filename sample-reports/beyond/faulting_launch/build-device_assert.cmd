nvcc -lineinfo -arch=sm_90 -o /root/out/cap/.bin/device_assert /work/main/tests/gpu/device_assert.cu 
