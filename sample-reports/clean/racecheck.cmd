env CUDAWATCH_STAGE=racecheck compute-sanitizer --tool racecheck --xml --save /tmp/cap/clean/racecheck.xml --print-limit 0 --error-exitcode 86 --target-processes all /tmp/cap/.bin/clean 
