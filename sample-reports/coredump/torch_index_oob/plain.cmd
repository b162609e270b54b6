python3 torch_index_oob.py 
