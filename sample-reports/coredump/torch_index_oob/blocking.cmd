env CUDA_LAUNCH_BLOCKING=1 python3 torch_index_oob.py 
