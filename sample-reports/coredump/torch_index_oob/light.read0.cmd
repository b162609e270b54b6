cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/torch_index_oob/light/core.1705 -ex info\ cuda\ kernels -ex bt 
