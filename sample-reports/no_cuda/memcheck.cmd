compute-sanitizer --tool memcheck --xml --save /tmp/cap/no_cuda/memcheck.xml --print-limit 0 --error-exitcode 86 --target-processes all python3 -c print\(\"no\ gpu\ here\"\) 
