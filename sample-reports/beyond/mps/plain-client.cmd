/root/out/cap/.bin/coalescing 
