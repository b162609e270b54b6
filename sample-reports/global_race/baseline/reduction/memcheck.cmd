compute-sanitizer /tmp/tmp.xs6FnzO5ri/reduction 
