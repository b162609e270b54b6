env LD_PRELOAD=/tmp/w/gr/cache/global-race/311d1a35d6ae23b6/libglobal-race.so CUDAWATCH_GLOBAL_RACE_OUT=/tmp/w/gr/captures/counter_grid/global-race /tmp/tmp.ojWiJGY9lC/counter_grid 
