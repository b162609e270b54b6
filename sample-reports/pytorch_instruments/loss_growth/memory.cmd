python3 /work/main/scripts/pytorch_memory_probe.py /root/out/pt/loss_growth /work/main/tests/gpu/pytorch/loss_growth.py 
