ncu --csv --page details --section SourceCounters --print-details all /tmp/cap/.bin/coalescing 
