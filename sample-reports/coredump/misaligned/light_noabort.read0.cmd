cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/misaligned/light_noabort/core.1393 -ex info\ cuda\ kernels -ex bt 
