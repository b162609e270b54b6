#!/usr/bin/env bash
# Captures what PyTorch's own instruments print on the GPU machine, for the
# memory-forensics and stream-race stages (issue 19): CSAN's reports
# (TORCH_CUDA_SANITIZER=1) on a racing program and its corrected twin, and
# the caching allocator's history (scripts/pytorch_memory_probe.py) at an
# out-of-memory error and at exit. Each run leaves <run>.cmd, .stdout,
# .stderr, .exit and .seconds in OUTDIR/<case>/, as capture-samples.sh does.
#
# Usage: scripts/capture-pytorch-instruments.sh OUTDIR
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: capture-pytorch-instruments.sh OUTDIR}" && cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/tests/gpu/pytorch
PY=${PYTHON:-python3}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}

# shellcheck source=lib/record.sh
. "$(dirname "$0")/lib/record.sh"

for c in stream_race stream_race_fixed pinned_nonblocking; do
  record plain "$c" -- env CUDA_LAUNCH_BLOCKING=1 "$PY" "$SRC/$c.py"
  record nosync "$c" -- "$PY" "$SRC/$c.py"
  record csan "$c" -- env TORCH_CUDA_SANITIZER=1 "$PY" "$SRC/$c.py"
done
for c in oom_batch loss_growth; do
  record plain "$c" -- env CUDA_LAUNCH_BLOCKING=1 "$PY" "$SRC/$c.py"
  record nosync "$c" -- "$PY" "$SRC/$c.py"
  record memory "$c" -- "$PY" "$ROOT/scripts/pytorch_memory_probe.py" "$OUTDIR/$c" "$SRC/$c.py"
done
"$PY" -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])' >"$OUTDIR/ENVIRONMENT.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >>"$OUTDIR/ENVIRONMENT.txt" 2>&1
