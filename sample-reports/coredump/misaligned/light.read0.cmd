cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/misaligned/light/core.1350 -ex info\ cuda\ kernels -ex bt 
