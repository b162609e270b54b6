compute-sanitizer --tool racecheck /tmp/tmp.xs6FnzO5ri/fence_flag 
