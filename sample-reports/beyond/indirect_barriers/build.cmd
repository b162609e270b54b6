nvcc -lineinfo -arch=sm_90 -std=c++17 -o /work/main/build/cap/.bin/barrier_chain /work/main/tests/gpu/beyond/barrier_chain.cu 
