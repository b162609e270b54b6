/tmp/tmp.xs6FnzO5ri/read_other_block 
