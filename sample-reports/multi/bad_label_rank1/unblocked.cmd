torchrun --standalone --nproc_per_node=2 bad_label_rank1.py 
