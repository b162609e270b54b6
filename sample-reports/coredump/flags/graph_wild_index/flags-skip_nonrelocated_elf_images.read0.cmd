cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/graph_wild_index/flags-skip_nonrelocated_elf_images/core.985 -ex info\ cuda\ kernels -ex bt 
