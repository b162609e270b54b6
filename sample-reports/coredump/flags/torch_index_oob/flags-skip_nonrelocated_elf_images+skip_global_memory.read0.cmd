cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/torch_index_oob/flags-skip_nonrelocated_elf_images+skip_global_memory/core.1219 -ex info\ cuda\ kernels -ex bt 
