cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/graph_wild_index/flags-skip_global_memory/core.836 -ex info\ cuda\ kernels -ex bt 
