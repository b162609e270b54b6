nvcc -arch=sm_90 -std=c++17 -o /tmp/w/cap/.bin/tiled_gemm_race-nolineinfo /work/main/tests/gpu/beyond/tiled_gemm_race.cu 
