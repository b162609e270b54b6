nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/invalid_launch /work/main/tests/gpu/invalid_launch.cu 
