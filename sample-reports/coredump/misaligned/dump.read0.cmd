cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/misaligned/dump/core.1307 -ex info\ cuda\ kernels -ex bt 
