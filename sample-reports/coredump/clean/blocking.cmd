env CUDA_LAUNCH_BLOCKING=1 /tmp/tmp.EDSbu5qdZI/clean 
