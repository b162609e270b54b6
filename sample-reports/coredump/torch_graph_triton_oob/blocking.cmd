env CUDA_LAUNCH_BLOCKING=1 python3 coredump/torch_graph_triton_oob.py 
