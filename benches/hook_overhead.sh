#!/usr/bin/env bash
# The overhead of the stages that run a Python program with cudawatch's
# hook, against the program as it runs for real (no CUDA_LAUNCH_BLOCKING),
# on the GPU machine: each program run plainly, as the csan stage runs it
# (TORCH_CUDA_SANITIZER=1, the hook on PYTHONPATH) and as the memory stage
# runs it (CUDAWATCH_MEMORY=1: allocator history with Python stacks, the
# OOM observer, the step hook), alternating, REPEAT times each; prints the
# median wall time of each and the ratios. Whole-process times: Python's and torch's
# import is part of both, as it is of every stage.
#
# Usage: benches/hook_overhead.sh [PROGRAM.py ...]   (REPEAT, default 3)
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
  "$ROOT/tests/gpu/pytorch/fixed_batch.py"
)
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 </dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
printf '%-28s %10s %10s %7s %10s %7s\n' program plain csan ratio memory ratio
for p in "${programs[@]}"; do
  plain=() csan=() memory=()
  for _ in $(seq "$REPEAT"); do
    plain+=("$(seconds python3 "$p")")
    csan+=("$(seconds env TORCH_CUDA_SANITIZER=1 CUDAWATCH_HOOK_OUT="$HOOK" PYTHONPATH="$HOOK" python3 "$p")")
    rm -f "$HOOK"/steps.jsonl "$HOOK"/oom-*.json
    memory+=("$(seconds env CUDAWATCH_MEMORY=1 CUDAWATCH_HOOK_OUT="$HOOK" PYTHONPATH="$HOOK" python3 "$p")")
  done
  mp=$(printf '%s\n' "${plain[@]}" | median)
  mc=$(printf '%s\n' "${csan[@]}" | median)
  mm=$(printf '%s\n' "${memory[@]}" | median)
  printf '%-28s %9ss %9ss %7s %9ss %7s\n' "$(basename "$p")" "$mp" "$mc" "$(ratio "$mc" "$mp")" "$mm" "$(ratio "$mm" "$mp")"
done
