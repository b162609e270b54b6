cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/torch_graph_triton_oob/light/core.1156 -ex info\ cuda\ kernels -ex bt 
