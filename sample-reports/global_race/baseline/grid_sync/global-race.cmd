env CUDA_INJECTION64_PATH=/work/main/target/global-race/libglobal-race.so CUDAWATCH_GLOBAL_RACE_OUT=/tmp/gr/grid_sync/global-race /tmp/tmp.xs6FnzO5ri/grid_sync 
