/work/main/build/cap/.bin/barrier_chain 
