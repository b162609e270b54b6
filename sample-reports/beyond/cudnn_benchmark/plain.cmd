python3 /work/main/tests/gpu/beyond/cudnn_benchmark_step.py 
