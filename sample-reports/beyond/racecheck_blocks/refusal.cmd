compute-sanitizer --tool racecheck --racecheck-filter-cluster-id 0 --error-exitcode 86 python3 -c print\(1\) 
