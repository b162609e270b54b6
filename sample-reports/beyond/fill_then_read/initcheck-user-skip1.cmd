compute-sanitizer --tool initcheck --launch-skip 1 /root/out/cap/.bin/fill_then_read 
