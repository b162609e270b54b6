cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/device_assert/light/core.1505 -ex info\ cuda\ kernels -ex bt 
