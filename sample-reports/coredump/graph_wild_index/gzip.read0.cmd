cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/graph_wild_index/gzip/core.928 -ex info\ cuda\ kernels -ex bt 
