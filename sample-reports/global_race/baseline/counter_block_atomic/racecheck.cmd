compute-sanitizer --tool racecheck /tmp/tmp.xs6FnzO5ri/counter_block_atomic 
