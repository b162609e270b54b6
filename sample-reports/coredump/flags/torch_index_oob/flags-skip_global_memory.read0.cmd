cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/torch_index_oob/flags-skip_global_memory/core.777 -ex info\ cuda\ kernels -ex bt 
