compute-sanitizer --tool memcheck --xml --save /tmp/lim/memcheck.xml --print-limit 5 --error-exitcode 86 --target-processes all --leak-check full /tmp/b/oob_write
