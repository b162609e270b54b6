nvcc -arch=sm_90 -std=c++17 -o /tmp/w/cap/.bin/cutlass_style_race-nolineinfo /work/main/tests/gpu/beyond/cutlass_style_race.cu 
