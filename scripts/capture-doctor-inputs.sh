#!/usr/bin/env bash
# What `cudawatch doctor` reads, captured raw on a GPU machine for its
# tests' fakes: nvidia-smi's queries, the tools' --version lines, PyTorch's
# build, and an ncu probe's answer about performance counters.
# Usage: scripts/capture-doctor-inputs.sh > doctor-inputs.txt
export PATH=$PATH:/usr/local/cuda/bin
section() { echo "=== $*"; "$@" 2>&1; echo "=== exit $?"; }
section nvidia-smi
section nvidia-smi --query-gpu=index,name,compute_cap,memory.used,memory.total,mig.mode.current,persistence_mode,driver_version --format=csv,noheader
section nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader
section nvidia-smi --query-gpu=index,uuid --format=csv,noheader
section nvcc --version
section compute-sanitizer --version
section ncu --version
section python3 -c "import torch; print(torch.__version__); print(torch.version.cuda); print(torch.cuda.get_arch_list()); print(torch.cuda.is_available())"
