env CUDAWATCH_STAGE=synccheck compute-sanitizer --tool synccheck --xml --save /tmp/cap/clean/synccheck.xml --print-limit 0 --error-exitcode 86 --target-processes all /tmp/cap/.bin/clean 
