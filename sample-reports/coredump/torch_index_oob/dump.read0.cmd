cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/torch_index_oob/dump/core.1643 -ex info\ cuda\ kernels -ex bt 
