env CUDAWATCH_STAGE=memcheck compute-sanitizer --tool memcheck --xml --save /tmp/cap/leak/memcheck.xml --print-limit 0 --error-exitcode 86 --target-processes all --leak-check full /tmp/cap/.bin/leak 
