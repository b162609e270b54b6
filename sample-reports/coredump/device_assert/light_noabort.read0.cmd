cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/device_assert/light_noabort/core.1548 -ex info\ cuda\ kernels -ex bt 
