cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/device_assert/flags-skip_global_memory+skip_shared_memory+skip_local_memory/core.1028 -ex info\ cuda\ kernels -ex bt 
