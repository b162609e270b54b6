env NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING=0 compute-sanitizer --tool racecheck --error-exitcode 86 --target-processes all /work/main/build/cap/.bin/barrier_chain 
