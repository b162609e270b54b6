cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/graph_wild_index/light_noabort/core.838 -ex info\ cuda\ kernels -ex bt 
