cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/torch_graph_triton_oob/light_noabort/core.1223 -ex info\ cuda\ kernels -ex bt 
