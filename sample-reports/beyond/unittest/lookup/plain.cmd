env CUDA_LAUNCH_BLOCKING=1 python3 -m unittest test_lookup_unittest 
