/tmp/tmp.xs6FnzO5ri/neighbour_barrier 
