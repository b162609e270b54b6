compute-sanitizer --tool memcheck --print-level info --print-session-details /tmp/b3/.bin/alloc_probe 
