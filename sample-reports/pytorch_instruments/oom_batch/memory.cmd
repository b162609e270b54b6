python3 /work/main/scripts/pytorch_memory_probe.py /root/out/pt/oom_batch /work/main/tests/gpu/pytorch/oom_batch.py 
