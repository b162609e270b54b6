cuda-gdb -nx -batch -ex target\ cudacore\ /tmp/tmp.tOmDJLh0RJ/graph_wild_index/dump/core.751 -ex bt 
