#!/usr/bin/env bash
# The CSAN stage's overhead against the plain run, on the GPU machine: each
# program run as cudawatch's csan stage runs it (TORCH_CUDA_SANITIZER=1,
# cudawatch's hook on PYTHONPATH) and as the program runs for real (no
# CUDA_LAUNCH_BLOCKING), alternating, REPEAT times each; prints the median
# wall time of each and the ratio. Whole-process times: Python's and torch's
# import is part of both, as it is of every stage.
#
# Usage: benches/csan_overhead.sh [PROGRAM.py ...]   (REPEAT, default 3)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=${REPEAT:-3}
HOOK=$(mktemp -d)
cp "$ROOT/src/tools/hook/sitecustomize.py" "$HOOK/"
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(
  "$ROOT/tests/gpu/pytorch/stream_race_fixed.py"
  "$ROOT/tests/gpu/pytorch/pinned_nonblocking.py"
  "$ROOT/tests/gpu/real/gpt2_step.py"
  "$ROOT/tests/gpu/real/resnet_step.py"
)
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 </dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-28s %10s %10s %7s\n' program plain csan ratio
for p in "${programs[@]}"; do
  plain=() csan=()
  for _ in $(seq "$REPEAT"); do
    plain+=("$(seconds python3 "$p")")
    csan+=("$(seconds env TORCH_CUDA_SANITIZER=1 CUDAWATCH_HOOK_OUT="$HOOK" PYTHONPATH="$HOOK" python3 "$p")")
  done
  mp=$(printf '%s\n' "${plain[@]}" | median)
  mc=$(printf '%s\n' "${csan[@]}" | median)
  printf '%-28s %9ss %9ss %6.2fx\n' "$(basename "$p")" "$mp" "$mc" "$(awk -v a="$mc" -v b="$mp" 'BEGIN { print a / b }')"
done
