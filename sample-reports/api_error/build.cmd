nvcc -lineinfo -arch=sm_90 -o /tmp/cap/.bin/api_error /work/main/tests/gpu/api_error.cu 
