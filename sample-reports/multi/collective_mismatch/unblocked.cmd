torchrun --standalone --nproc_per_node=2 collective_mismatch.py 
