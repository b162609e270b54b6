nvcc -lineinfo -arch=sm_90 -o /root/out/cap/.bin/async_loads /work/main/tests/gpu/beyond/async_loads.cu 
