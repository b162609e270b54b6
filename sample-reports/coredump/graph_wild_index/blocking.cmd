env CUDA_LAUNCH_BLOCKING=1 /tmp/tmp.EDSbu5qdZI/graph_wild_index 
