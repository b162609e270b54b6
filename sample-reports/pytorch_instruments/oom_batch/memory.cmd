env PYTHONPATH=/work/main/src/tools/hook CUDAWATCH_MEMORY=1 CUDAWATCH_HOOK_OUT=/tmp/cap/oom_batch/memory python3 /work/main/tests/gpu/pytorch/oom_batch.py 
