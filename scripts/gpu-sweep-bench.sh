#!/usr/bin/env bash
# On a GPU machine with two GPUs: the sweep of tests/gpu/sweep/corpus.toml
# on 1 GPU and on 2, and `cudawatch run --parallel-stages` against a
# sequential run of one program, wall times side by side
# (docs/benchmarks.md). Needs target/release/cudawatch.
#
# Usage: scripts/gpu-sweep-bench.sh OUTDIR
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: gpu-sweep-bench.sh OUTDIR}" && cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
export PATH=$PATH:/usr/local/cuda/bin NO_COLOR=1
cd "$ROOT"
mkdir -p build/gpu
for c in oob_write oob_read smem_race uninit_read leak misaligned coalescing clean; do
  nvcc -lineinfo -arch=sm_90 -o "build/gpu/$c" "tests/gpu/$c.cu" || echo "build $c failed"
done
{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  compute-sanitizer --version | tail -n 1
  ncu --version | tail -n 1
  nproc
} >"$OUTDIR/machine.txt" 2>&1

timed() { # NAME COMMAND... : wall seconds into times.txt
  local name=$1 start end
  shift
  start=$(date +%s%N)
  "$@"
  local rc=$?
  end=$(date +%s%N)
  echo "$name $(((end - start) / 1000000)) ms exit=$rc" | tee -a "$OUTDIR/times.txt"
}
rm -rf /tmp/sweep-1gpu /tmp/sweep-2gpu /tmp/seq /tmp/par
timed sweep-1gpu "$CW" sweep tests/gpu/sweep/corpus.toml --out-dir /tmp/sweep-1gpu --gpus 0 \
  --report markdown="$OUTDIR/sweep-1gpu.md" 2>"$OUTDIR/sweep-1gpu.txt"
timed sweep-2gpu "$CW" sweep tests/gpu/sweep/corpus.toml --out-dir /tmp/sweep-2gpu --gpus 0,1 \
  --baseline /tmp/sweep-1gpu --report markdown="$OUTDIR/sweep-2gpu.md" --report html="$OUTDIR/sweep-2gpu.html" \
  2>"$OUTDIR/sweep-2gpu.txt"
cp /tmp/sweep-2gpu/report.json "$OUTDIR/sweep-2gpu.json"
prog=(python3 tests/gpu/torch_index_oob.py)
timed run-sequential "$CW" run --out-dir /tmp/seq -- "${prog[@]}" 2>"$OUTDIR/run-sequential.txt"
timed run-parallel "$CW" run --parallel-stages --gpus 0,1 --out-dir /tmp/par -- "${prog[@]}" 2>"$OUTDIR/run-parallel.txt"
# The same report either way: stage outcomes and site ids.
python3 - /tmp/seq/report.json /tmp/par/report.json >>"$OUTDIR/times.txt" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: ([(s["tool"], s["outcome"]) for s in r["stages"]], sorted(f["id"] for f in r["findings"]))
print("parallel-stages report same as sequential:", key(a) == key(b))
if key(a) != key(b):
    print(key(a)); print(key(b))
PY
cat "$OUTDIR/times.txt"
