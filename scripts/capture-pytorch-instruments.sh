#!/usr/bin/env bash
# Captures what PyTorch's own instruments give on the GPU machine, for the
# csan, memory and oom-recovery stages (issue 19), from the programs in
# tests/gpu/pytorch/:
# - CSAN's reports (TORCH_CUDA_SANITIZER=1) on racing programs and their
#   corrected twins, and on a sparse gradient alone and under cudawatch's
#   hook;
# - cudawatch's Python hook (src/tools/hook/sitecustomize.py, the very file
#   the memory stage writes into a run) with CUDAWATCH_MEMORY=1: hook.json,
#   oom-N.json and steps.jsonl in OUTDIR/<case>/memory/;
# - the same hook capping memory to 60% of that run's peak
#   (CUDAWATCH_CAP_FROM), as the oom-recovery stage does: OUTDIR/<case>/recovery/;
# - fragmentation.py again with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True;
# - other_process.py while hold_memory.py holds all but 2 GiB of the GPU.
# Each run leaves <run>.cmd, .stdout, .stderr, .exit and .seconds in
# OUTDIR/<case>/, as capture-samples.sh does.
#
# Usage: scripts/capture-pytorch-instruments.sh OUTDIR [CASE...]
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: capture-pytorch-instruments.sh OUTDIR}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/tests/gpu/pytorch
HOOK=$ROOT/src/tools/hook
PY=${PYTHON:-python3}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
want() { [ ${#CASES[@]} -eq 0 ] || [[ " ${CASES[*]} " == *" $1 "* ]]; }
CASES=("$@")

# shellcheck source=lib/record.sh
. "$(dirname "$0")/lib/record.sh"

memory() { # memory CASE [env...]: the hook's memory instruments, as the memory stage runs them
  local c=$1
  shift
  mkdir -p "$OUTDIR/$c/memory"
  record memory "$c" -- env PYTHONPATH="$HOOK" CUDAWATCH_MEMORY=1 CUDAWATCH_HOOK_OUT="$OUTDIR/$c/memory" "$@" "$PY" "$SRC/$c.py"
}
recovery() { # recovery CASE: capped to 60% of the memory run's peak, as the oom-recovery stage runs it
  local c=$1
  mkdir -p "$OUTDIR/$c/recovery"
  record recovery "$c" -- env PYTHONPATH="$HOOK" CUDAWATCH_MEMORY=1 CUDAWATCH_HOOK_OUT="$OUTDIR/$c/recovery" \
    CUDAWATCH_CAP_FROM="$OUTDIR/$c/memory/hook.json" CUDAWATCH_CAP_SHARE=0.6 "$PY" "$SRC/$c.py"
}

for c in stream_race stream_race_fixed pinned_nonblocking prefetch_race prefetch_race_fixed; do
  want "$c" || continue
  record plain "$c" -- env CUDA_LAUNCH_BLOCKING=1 "$PY" "$SRC/$c.py"
  record csan "$c" -- env TORCH_CUDA_SANITIZER=1 "$PY" "$SRC/$c.py"
done
# A sparse gradient under CSAN: alone (torch 2.11's CSAN stops at the
# backward pass: a sparse tensor has no data pointer), and under
# cudawatch's hook as the csan stage runs it (the hook hands CSAN the
# gradient's indices and values).
for c in sparse_race sparse_race_fixed; do
  want "$c" || continue
  record plain "$c" -- env CUDA_LAUNCH_BLOCKING=1 "$PY" "$SRC/$c.py"
  record csan "$c" -- env TORCH_CUDA_SANITIZER=1 "$PY" "$SRC/$c.py"
  mkdir -p "$OUTDIR/$c/csan-hook"
  record csan-hook "$c" -- env TORCH_CUDA_SANITIZER=1 PYTHONPATH="$HOOK" \
    CUDAWATCH_HOOK_OUT="$OUTDIR/$c/csan-hook" "$PY" "$SRC/$c.py"
done
for c in oom_batch loss_growth fragmentation oom_recovers fixed_batch; do
  want "$c" || continue
  record plain "$c" -- env CUDA_LAUNCH_BLOCKING=1 "$PY" "$SRC/$c.py"
  memory "$c"
done
for c in oom_recovers fixed_batch; do
  want "$c" && recovery "$c"
done
if want fragmentation; then
  record expandable fragmentation -- env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "$PY" "$SRC/fragmentation.py"
fi
if want other_process; then
  "$PY" "$SRC/hold_memory.py" >"$OUTDIR/hold_memory.stdout" 2>&1 &
  holder=$!
  for _ in $(seq 60); do grep -q holding "$OUTDIR/hold_memory.stdout" 2>/dev/null && break; sleep 1; done
  record plain other_process -- "$PY" "$SRC/other_process.py"
  memory other_process
  kill "$holder"
  wait "$holder" 2>/dev/null
fi
"$PY" -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])' >"$OUTDIR/ENVIRONMENT.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >>"$OUTDIR/ENVIRONMENT.txt" 2>&1
