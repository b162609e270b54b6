compute-sanitizer /tmp/tmp.xs6FnzO5ri/waw_blocks_fixed 
