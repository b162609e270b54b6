env TORCH_CUDA_SANITIZER=1 PYTHONPATH=/work/main/src/tools/hook CUDAWATCH_HOOK_OUT=/root/out/w/cap/sparse_race/csan-hook python3 /work/main/tests/gpu/pytorch/sparse_race.py 
