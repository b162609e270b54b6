cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/graph_wild_index/flags-skip_nonrelocated_elf_images+skip_global_memory/core.1277 -ex info\ cuda\ kernels -ex bt 
