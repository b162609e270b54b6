nvcc -lineinfo -arch=sm_90 -o /root/out/cap/.bin/smem_race /work/main/tests/gpu/smem_race.cu 
