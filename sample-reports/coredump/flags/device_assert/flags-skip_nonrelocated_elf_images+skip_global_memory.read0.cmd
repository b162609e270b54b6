cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/device_assert/flags-skip_nonrelocated_elf_images+skip_global_memory/core.1176 -ex info\ cuda\ kernels -ex bt 
