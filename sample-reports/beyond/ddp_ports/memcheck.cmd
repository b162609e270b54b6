compute-sanitizer --tool memcheck --xml --save /root/out/beyond/ddp_ports/memcheck.xml --print-limit 0 --error-exitcode 86 --target-processes all python3 ddp_step.py 
