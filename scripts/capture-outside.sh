#!/usr/bin/env bash
# Captures of what the tools print for programs written the way code
# outside this project is (tests/gpu/outside/), with the flags a user types
# and with the stages' own, on the GPU machine: sample-reports/outside/.
#
#   host_api_uninit    initcheck on a host copy of memory nobody wrote
#                      (C++): plain, as the stage runs it (device
#                      backtraces), and with host stacks; then
#                      `cudawatch run --stages plain,initcheck`.
#   torch_empty_copy   the same from PyTorch (`torch.empty(...).cpu()`),
#                      the allocator off as the stage has it.
#   stack_overflow     a recursive device function out of stack: memcheck
#                      plain, and each sanitizer as its stage runs it (XML);
#                      then `cudawatch run` with every stage.
#   error_macro        a program whose error macro prints `file:line
#                      <cudaGetErrorString>` and exits 1: its plain output,
#                      then `cudawatch run --stages plain,coredump`.
#   error_macro_read   the same with a wild read instead of a wild write.
#   libcu_atomics      ncu's pages of libcu++ atomics (`32(3)` figures):
#                      `cudawatch run --stages plain,ncu`, its ncu folder.
#   duplicate_kernels  with NEW_SANITIZER (a compute-sanitizer 2026.4,
#                      unpacked from PyPI's nvidia-cuda-sanitizer-api, never
#                      committed): memcheck as its stage runs it on the
#                      first step of tests/gpu/real/train_resnet.py, which
#                      2026.4 ends with "CUDA API Error: Duplicate entry
#                      kernels named ..." records for cuDNN's kernels.
#   gnn_backward_reduce `cudawatch run --stages plain,initcheck` on
#                      tests/gpu/real/train_gnn.py (a correct GNN script),
#                      initcheck under the program's PyPI compute-sanitizer
#                      2026.4 where it has one: ATen's reduction on
#                      autograd's thread reads its staging buffer's unused
#                      lanes, and the rerun with host stacks keeps no stack.
#   tabular_standardise `cudawatch run --stages plain,initcheck` on
#                      tests/gpu/real/train_tabular.py (a correct tabular
#                      script): ATen's reduction at the user's `X.mean(0)`
#                      and `X.std(0)` reads its staging buffer's unused
#                      lanes on the main thread, with the user's line; the
#                      rerun with every tensor filled reads them again.
#   tabular_missing_feature the same on tests/gpu/real/
#                      tabular_missing_feature.py, whose feature matrix
#                      has a column nobody wrote: its reads are gone from
#                      the rerun.
#
# Usage: scripts/capture-outside.sh OUTDIR [CASE...]   (needs target/release/cudawatch)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: capture-outside.sh OUTDIR [CASE...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/tests/gpu/outside
CW=$ROOT/target/release/cudawatch
export PATH=$PATH:/usr/local/cuda/bin
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(host_api_uninit torch_empty_copy stack_overflow error_macro error_macro_read libcu_atomics duplicate_kernels gnn_backward_reduce tabular_standardise tabular_missing_feature)
STAGE=(compute-sanitizer --print-limit 0 --error-exitcode 86 --target-processes all)

# Each C++ program built as users build theirs for an H100 (with line
# information, as cudawatch's docs ask), all at once.
build=$(mktemp -d)
for c in "${cases[@]}"; do
  [ -f "$SRC/$c.cu" ] && nvcc -lineinfo -arch=sm_90 -o "$build/$c" "$SRC/$c.cu" 2>"$OUTDIR/$c.nvcc.txt" &
done
wait

# keep CASE NAME CMD...: CMD's output in CASE/NAME.out, its exit after it.
keep() {
  local c=$1 name=$2
  shift 2
  mkdir -p "$OUTDIR/$c"
  (cd "$SRC" && timeout 300 "$@") >"$OUTDIR/$c/$name.out" 2>&1 </dev/null
  echo "exit $?" >>"$OUTDIR/$c/$name.out"
}

# cw CASE STAGES PROGRAM...: `cudawatch run` on it, its run folder kept
# without the hook and the dumps.
cw() {
  local c=$1 stages=$2
  shift 2
  mkdir -p "$OUTDIR/$c"
  (cd "$SRC" && timeout 300 "$CW" --color never run --stages "$stages" \
    --out-dir "cudawatch-runs/$c" --format json -- "$@" \
    >"$OUTDIR/$c/report.json" 2>"$OUTDIR/$c/report.txt" </dev/null)
  echo "exit $?" >>"$OUTDIR/$c/report.txt"
  rm -rf "$OUTDIR/$c/run" && mv "$SRC/cudawatch-runs/$c" "$OUTDIR/$c/run"
  rm -rf "$OUTDIR/$c/run/hook" "$OUTDIR/$c"/run/coredump/*.nvcudmp
}

for c in "${cases[@]}"; do
  case $c in
    host_api_uninit)
      keep $c plain compute-sanitizer --tool initcheck "$build/$c"
      keep $c stage "${STAGE[@]}" --tool initcheck --show-backtrace device \
        --xml --save "$OUTDIR/$c/initcheck.xml" "$build/$c"
      keep $c host-stacks "${STAGE[@]}" --tool initcheck --xml --save "$OUTDIR/$c/host-stacks.xml" "$build/$c"
      cp "$build/$c" "$SRC/$c" && cw $c plain,initcheck ./$c; rm -f "$SRC/$c" ;;
    torch_empty_copy)
      keep $c plain compute-sanitizer --tool initcheck python3 $c.py
      keep $c stage env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${STAGE[@]}" --tool initcheck \
        --show-backtrace device --xml --save "$OUTDIR/$c/initcheck.xml" python3 $c.py
      keep $c host-stacks env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${STAGE[@]}" --tool initcheck \
        --xml --save "$OUTDIR/$c/host-stacks.xml" python3 $c.py
      cw $c plain,initcheck python3 $c.py ;;
    stack_overflow)
      keep $c plain compute-sanitizer "$build/$c"
      for t in memcheck racecheck initcheck synccheck; do
        keep $c $t "${STAGE[@]}" --tool $t --xml --save "$OUTDIR/$c/$t.xml" "$build/$c"
      done
      cp "$build/$c" "$SRC/$c" && cw $c plain,memcheck,racecheck,initcheck,synccheck,coredump ./$c
      rm -f "$SRC/$c" ;;
    error_macro | error_macro_read)
      keep $c plain "$build/$c"
      cp "$build/$c" "$SRC/$c" && cw $c plain,coredump ./$c; rm -f "$SRC/$c" ;;
    libcu_atomics)
      cp "$build/$c" "$SRC/$c" && cw $c plain,ncu ./$c; rm -f "$SRC/$c" ;;
    duplicate_kernels)
      [ -x "${NEW_SANITIZER:-}" ] || { echo "duplicate_kernels: no NEW_SANITIZER" >&2; continue; }
      "$NEW_SANITIZER" --version >"$OUTDIR/$c.version.txt" 2>&1
      (export PYTHONPATH=$ROOT/src/tools/hook CUDAWATCH_STOP_AFTER_STEPS=1 \
        CUDAWATCH_HOOK_OUT=$(mktemp -d) CUDAWATCH_CUDNN_BENCHMARK_OFF=1
      keep $c memcheck env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$NEW_SANITIZER" --print-limit 0 \
        --error-exitcode 86 --target-processes all --tool memcheck \
        --xml --save "$OUTDIR/$c/memcheck.xml" python3 ../real/train_resnet.py) ;;
    gnn_backward_reduce)
      cw $c plain,initcheck python3 ../real/train_gnn.py ;;
    tabular_standardise)
      cw $c plain,initcheck python3 ../real/train_tabular.py ;;
    tabular_missing_feature)
      cw $c plain,initcheck python3 ../real/$c.py ;;
    *) echo "unknown case $c" >&2 ;;
  esac
done
rmdir "$SRC/cudawatch-runs" 2>/dev/null
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -2 | head -1
  compute-sanitizer --version | tail -1
  ncu --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__)'
} >"$OUTDIR/ENVIRONMENT.txt" 2>&1
