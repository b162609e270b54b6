env PYTHONPATH=/work/main/src/tools/hook CUDAWATCH_MEMORY=1 CUDAWATCH_HOOK_OUT=/tmp/cap/loss_growth/memory python3 /work/main/tests/gpu/pytorch/loss_growth.py 
