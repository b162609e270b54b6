nvcc -lineinfo -arch=sm_90 -o /root/out/cap/.bin/graph_oob /work/main/tests/gpu/beyond/graph_oob.cu 
