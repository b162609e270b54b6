cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/graph_wild_index/light/core.795 -ex info\ cuda\ kernels -ex bt 
