compute-sanitizer --tool racecheck /tmp/tmp.xs6FnzO5ri/neighbour_no_barrier 
