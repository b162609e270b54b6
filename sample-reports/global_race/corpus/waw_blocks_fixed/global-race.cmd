env LD_PRELOAD=/tmp/w/gr/cache/global-race/311d1a35d6ae23b6/libglobal-race.so CUDAWATCH_GLOBAL_RACE_OUT=/tmp/w/gr/captures/waw_blocks_fixed/global-race /tmp/tmp.ojWiJGY9lC/waw_blocks_fixed 
