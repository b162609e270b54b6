#!/usr/bin/env bash
# The PyTorch corpus of issue 19 on the GPU machine: `cudawatch run` with
# the plain, csan and memory stages on every program of tests/gpu/pytorch/
# (other_process.py while hold_memory.py holds all but 2 GiB of the GPU),
# and with the plain and memory stages on the correct programs of
# tests/gpu/real/, keeping each terminal report, JSON report and exit code.
#
# Usage: scripts/gpu-pytorch.sh OUTDIR [CASE...]   (needs target/release/cudawatch)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: gpu-pytorch.sh OUTDIR}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
export PATH=$PATH:/usr/local/cuda/bin
CASES=("$@")
want() { [ ${#CASES[@]} -eq 0 ] || [[ " ${CASES[*]} " == *" $1 "* ]]; }

# Each run folder is made inside the program's folder under a relative name
# and moved out after, as scripts/gpu-real.sh does: the reports name the
# programs' files from there, not the GPU host's folders.
one() { # one SRC CASE STAGES
  local src=$1 c=$2 stages=$3 runs code
  runs=cudawatch-runs/$(basename "$OUTDIR")
  (cd "$src" && rm -rf "${runs:?}/$c" && "$CW" --color never run --stages "$stages" \
    --out-dir "$runs/$c" --timeout 300 --format json -- python3 "$c.py" \
    >"$OUTDIR/$c.json" 2>"$OUTDIR/$c.txt" </dev/null)
  code=$?
  mkdir -p "$OUTDIR/runs" && rm -rf "$OUTDIR/runs/$c" && mv "$src/$runs/$c" "$OUTDIR/runs/$c"
  echo "$c exit=$code" >>"$OUTDIR/exits.txt"
}

for c in stream_race stream_race_fixed pinned_nonblocking prefetch_race prefetch_race_fixed \
  oom_batch loss_growth fragmentation oom_recovers fixed_batch; do
  want "$c" && one "$ROOT/tests/gpu/pytorch" "$c" plain,csan,memory
done
if want other_process; then
  python3 "$ROOT/tests/gpu/pytorch/hold_memory.py" >"$OUTDIR/hold_memory.stdout" 2>&1 &
  holder=$!
  for _ in $(seq 60); do grep -q holding "$OUTDIR/hold_memory.stdout" 2>/dev/null && break; sleep 1; done
  one "$ROOT/tests/gpu/pytorch" other_process plain,memory
  kill "$holder"
  wait "$holder" 2>/dev/null
fi
for c in resnet_step gpt2_step lightning_fit compiled_mlp; do
  want "$c" && one "$ROOT/tests/gpu/real" "$c" plain,memory
done
sort "$OUTDIR/exits.txt"
