nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/smem_race /work/main/tests/gpu/smem_race.cu 
