cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/torch_index_oob/flags-skip_global_memory+skip_shared_memory+skip_local_memory/core.1071 -ex info\ cuda\ kernels -ex bt 
