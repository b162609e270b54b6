ncu --section SourceCounters -f -o /tmp/cap/coalescing/ncu-sc /tmp/cap/.bin/coalescing 
