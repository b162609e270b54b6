nvcc -lineinfo -arch=sm_90 -o /root/out/cap/.bin/retry_until_done /work/main/tests/gpu/beyond/retry_until_done.cu 
