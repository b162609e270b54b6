env PYTHONPATH=/work/main/src/tools/hook CUDAWATCH_MEMORY=1 CUDAWATCH_HOOK_OUT=/tmp/cap/oom_recovers/memory python3 /work/main/tests/gpu/pytorch/oom_recovers.py 
