cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/torch_index_oob/flags-skip_nonrelocated_elf_images/core.922 -ex info\ cuda\ kernels -ex bt 
