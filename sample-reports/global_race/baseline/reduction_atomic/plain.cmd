/tmp/tmp.xs6FnzO5ri/reduction_atomic 
