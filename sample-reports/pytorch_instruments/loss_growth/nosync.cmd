python3 /work/main/tests/gpu/pytorch/loss_growth.py 
