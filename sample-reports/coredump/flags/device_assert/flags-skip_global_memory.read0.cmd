cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/device_assert/flags-skip_global_memory/core.734 -ex info\ cuda\ kernels -ex bt 
