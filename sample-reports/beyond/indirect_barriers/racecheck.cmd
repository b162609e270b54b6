compute-sanitizer --tool racecheck --error-exitcode 86 --target-processes all /work/main/build/cap/.bin/barrier_chain 
