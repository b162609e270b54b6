cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/torch_index_oob/light_noabort/core.1763 -ex info\ cuda\ kernels -ex bt 
