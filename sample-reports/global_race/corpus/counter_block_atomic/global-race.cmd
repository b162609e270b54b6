env LD_PRELOAD=/tmp/w/gr/cache/global-race/db730e56b1a1452e/libglobal-race.so CUDAWATCH_GLOBAL_RACE_OUT=/tmp/w/gr/captures/counter_block_atomic/global-race /tmp/tmp.RiEDnz89mn/counter_block_atomic 
