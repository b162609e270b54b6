env LD_PRELOAD=/tmp/w/gr/cache/global-race/db730e56b1a1452e/libglobal-race.so CUDAWATCH_GLOBAL_RACE_OUT=/tmp/w/gr/captures/neighbour_barrier/global-race /tmp/tmp.RiEDnz89mn/neighbour_barrier 
