cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/torch_graph_triton_oob/dump/core.1094 -ex info\ cuda\ kernels -ex bt 
