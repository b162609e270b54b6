env CUDAWATCH_STAGE=initcheck compute-sanitizer --tool initcheck --xml --save /tmp/cap/coalescing/initcheck.xml --print-limit 0 --error-exitcode 86 --target-processes all /tmp/cap/.bin/coalescing 
