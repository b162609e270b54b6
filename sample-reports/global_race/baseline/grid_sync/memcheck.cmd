compute-sanitizer /tmp/tmp.xs6FnzO5ri/grid_sync 
