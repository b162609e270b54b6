nvcc -lineinfo -arch=sm_90 -o /tmp/fin/cap/.bin/two_bugs /work/main/tests/gpu/beyond/two_bugs.cu 
