compute-sanitizer /tmp/tmp.xs6FnzO5ri/histogram_atomic 
