cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/device_assert/dump/core.1461 -ex info\ cuda\ kernels -ex bt 
