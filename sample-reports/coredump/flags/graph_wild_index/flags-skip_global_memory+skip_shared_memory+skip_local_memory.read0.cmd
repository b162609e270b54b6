cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/graph_wild_index/flags-skip_global_memory+skip_shared_memory+skip_local_memory/core.1133 -ex info\ cuda\ kernels -ex bt 
