env CUDAWATCH_STAGE=racecheck compute-sanitizer --tool racecheck --xml --save /tmp/cap/oob_write/racecheck.xml --print-limit 0 --error-exitcode 86 --target-processes all /tmp/cap/.bin/oob_write 
