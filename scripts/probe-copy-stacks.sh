#!/usr/bin/env bash
# Which host copies initcheck's records keep a host stack for, and what
# EfficientNet's stackless copies are (docs/tool-surprises.md, "Some
# host-API records have no host stack"), on the GPU machine:
#
#   copy_threads       never-written memory copied to the host from the
#                      main thread, a Python thread and autograd's backward
#                      thread, and device to device from the main and
#                      autograd's threads: under 2026.4 with host stacks,
#                      the XML's records counted by size, stack and line.
#   copy_half_written  a buffer half written by ATen's fill kernel, copied
#                      to the host and device to device, and a never-written
#                      one: under 2026.4 and the toolkit's 2025.3.1, with
#                      every kernel checked, with the fill kernel left out
#                      (2026.4 tracking its stores) and with none checked.
#   effnet_profile     train_effnet_fp16.py's two steps under PyTorch's
#                      profiler: the op and thread of each 73,728-byte copy.
#   effnet_history     its first step under 2026.4's initcheck (no kernel
#                      checked, stores tracked, host stacks) with the
#                      allocator's history on: the allocation each host-API
#                      record read (the caching allocator left on: the
#                      history is the caching allocator's).
#
# Usage: NEW_SANITIZER=PATH scripts/probe-copy-stacks.sh OUTDIR [CASE...]
#   NEW_SANITIZER: a compute-sanitizer 2026.4 (PyPI's
#   nvidia-cuda-sanitizer-api, unpacked into the program's Python)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: probe-copy-stacks.sh OUTDIR [CASE...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=$ROOT/tests/gpu/probes
NEW=${NEW_SANITIZER:?a compute-sanitizer 2026.4}
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
OLD=$(command -v compute-sanitizer)
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(copy_threads copy_half_written effnet_profile effnet_history)
C=(--tool initcheck --xml --print-limit 2000 --error-exitcode 86)
NONE=(--kernel-name kns=cudawatch_no_such_kernel --initcheck-track-filtered-global-memory yes)
cd "$ROOT" || exit 1
# counted NAME PROGRAM SANITIZER ARGS...: PROGRAM under SANITIZER into
# NAME.xml, the allocator off as cudawatch's stage has it; prints the counts.
counted() {
  local name=$1 program=$2
  shift 2
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 60 "$@" --save "$OUTDIR/$name.xml" \
    python3 "$P/$program" >"$OUTDIR/$name.out" 2>&1
  echo "== $name (exit $?)"
  python3 "$P/copy_stacks_xml.py" "$OUTDIR/$name.xml" "$program"
}
for c in "${cases[@]}"; do
  case $c in
    copy_threads) counted threads-2026.4 copy_threads.py "$NEW" "${C[@]}" ;;
    copy_half_written)
      counted half-2026.4 copy_half_written.py "$NEW" "${C[@]}"
      counted half-2026.4-fill-left-out copy_half_written.py "$NEW" "${C[@]}" \
        --kernel-name-exclude regex=FillFunctor --initcheck-track-filtered-global-memory yes
      counted half-2026.4-none-checked copy_half_written.py "$NEW" "${C[@]}" "${NONE[@]}"
      counted half-2025.3.1 copy_half_written.py "$OLD" "${C[@]}"
      counted half-2025.3.1-fill-left-out copy_half_written.py "$OLD" "${C[@]}" \
        --kernel-name-exclude regex=FillFunctor
      ;;
    effnet_profile)
      timeout 150 python3 "$P/effnet_copies_profile.py" >"$OUTDIR/effnet-profile.txt" 2>&1
      echo "== effnet_profile (exit $?)"
      grep -v "^step\|^done\|Warning\|_warn_once\|scheduler.step" "$OUTDIR/effnet-profile.txt"
      ;;
    effnet_history)
      SNAP=$OUTDIR/effnet.pickle timeout 300 "$NEW" --tool initcheck "${NONE[@]}" --xml \
        --save "$OUTDIR/effnet.xml" --print-limit 200000 --show-backtrace host --error-exitcode 86 \
        python3 "$P/effnet_copies_history.py" >"$OUTDIR/effnet.out" 2>&1
      echo "== effnet_history (exit $?)"
      timeout 120 python3 "$P/effnet_copies_map.py" "$OUTDIR/effnet.xml" "$OUTDIR/effnet.pickle" | head -80
      ;;
    *) echo "unknown case $c" >&2 ;;
  esac
done
