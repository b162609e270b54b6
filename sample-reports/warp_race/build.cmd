nvcc -lineinfo -arch=sm_90 -o /root/out/cap/.bin/warp_race /work/main/tests/gpu/warp_race.cu 
