env CUDAWATCH_STAGE=initcheck compute-sanitizer --tool initcheck --xml --save /tmp/cap/api_error/initcheck.xml --print-limit 0 --error-exitcode 86 --target-processes all /tmp/cap/.bin/api_error 
