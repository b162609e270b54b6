#!/usr/bin/env bash
# End to end on the GPU machine: `cudawatch run` on every planted-bug
# program and both clean ones, keeping each terminal report and run
# directory (the overhead benchmark is scripts/bench-overhead.sh).
# Each program is built and run from the project's root with paths
# relative to it (binaries and run folders under build/e2e/, which git
# ignores), one at a time by default: the terminal reports (docs/examples/)
# then name `tests/gpu/oob_write.cu` and `build/e2e/bin/oob_write`, not the
# GPU host's folders, and no program's memory shows in another's report.
#
# Usage: scripts/gpu-e2e.sh OUTDIR [CASE...]   (needs target/release/cudawatch)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: gpu-e2e.sh OUTDIR}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
cd "$ROOT" || exit 1
SRC=tests/gpu
BIN=build/e2e/bin
RUNS=build/e2e/runs
rm -rf "$RUNS"
mkdir -p "$BIN" "$RUNS"
export PATH=$PATH:/usr/local/cuda/bin
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(oob_read oob_write misaligned smem_race uninit_read leak device_assert
  invalid_launch api_error divergent_barrier coalescing no_kernel_image clean
  torch_index_oob torch_oom triton_hidden_oob cupy_cublas_error torch_train_clean)

for c in "${cases[@]}"; do
  if [ -f "$SRC/$c.cu" ]; then
    arch=(-arch=sm_90)
    [ "$c" = no_kernel_image ] && arch=(-gencode arch=compute_100,code=sm_100)
    nvcc -lineinfo "${arch[@]}" -o "$BIN/$c" "$SRC/$c.cu"
  fi
done

one() {
  local c=$1 prog
  if [ -f "$SRC/$c.py" ]; then prog=(python3 "$SRC/$c.py"); else prog=("$BIN/$c"); fi
  "$CW" --color never run --out-dir "$RUNS/$c" --timeout "${STAGE_TIMEOUT:-240}" \
    --report html="$RUNS/$c.html" -- "${prog[@]}" \
    >"$OUTDIR/$c.json" 2>"$OUTDIR/$c.txt" </dev/null
  echo "$c exit=$?" >>"$OUTDIR/exits.txt"
  mv "$RUNS/$c.html" "$OUTDIR/$c.html"
}
export -f one
export CW SRC BIN RUNS OUTDIR
printf '%s\n' "${cases[@]}" | xargs -P "${PARALLEL:-1}" -I{} bash -c 'one {}'
sort "$OUTDIR/exits.txt"
rm -rf "$OUTDIR/runs" && cp -r "$RUNS" "$OUTDIR/runs"
