cuda-gdb-minimal -nx -batch -ex target\ cudacore\ /tmp/tmp.tTcjQJVvoL/device_assert/flags-skip_nonrelocated_elf_images/core.879 -ex info\ cuda\ kernels -ex bt 
