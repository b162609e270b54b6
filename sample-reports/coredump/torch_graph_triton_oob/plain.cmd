python3 coredump/torch_graph_triton_oob.py 
