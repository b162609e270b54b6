cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/graph_wild_index/constbank/core.881 -ex info\ cuda\ kernels -ex bt 
