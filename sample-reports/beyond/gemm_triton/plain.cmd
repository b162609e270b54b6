env CUDA_LAUNCH_BLOCKING=1 python3 /work/main/tests/gpu/beyond/gemm_output_read.py triton 
