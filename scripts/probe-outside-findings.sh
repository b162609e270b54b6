#!/usr/bin/env bash
# What two outside scripts' initcheck findings were (2026-11-29, H200):
#
#   reduce_staging  tests/gpu/probes/reduce_staging.py's cases, each under
#                   initcheck as its stage runs it (2026.4, the libraries'
#                   kernels left out, their stores tracked), with host
#                   stacks: records by kernel, block, stack and Python line
#                   (train_gnn.py's false FINDINGS).
#   reduce_blocks   more of reduce_staging.py's cases (a loop, a tabular
#                   dataset's mean and std, the user's bugs in a reduction
#                   of many blocks), the same way, with each kernel's
#                   records in their order as runs of one block and PC:
#                   whether the staging read is one block a launch.
#   rnn_names       the kernels cuDNN's GRU and LSTM launch, by PyTorch's
#                   profiler (train_ctc.py's `RNN_bidirectional_accum_bp1_1`
#                   was owned by no library).
#   moe_copies      tests/gpu/real/train_moe.py's first two steps under
#                   2026.4's initcheck with no kernel checked (stores
#                   tracked) and host stacks: whether its host copy, which
#                   the stage left without a line (its flood dropped
#                   records, so no rerun), has a stack to give.
#
# Usage: NEW_SANITIZER=PATH scripts/probe-outside-findings.sh OUTDIR [CASE...]
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: probe-outside-findings.sh OUTDIR [CASE...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=$ROOT/tests/gpu/probes
NEW=${NEW_SANITIZER:?a compute-sanitizer 2026.4}
export PYTHONUNBUFFERED=1
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(reduce_staging rnn_names moe_copies)
LIBS='regex=(cudnn|cublas|cutlass|xmma|nvjet|fmha|splitKreduce|gemv2T_kernel|gemv2N_kernel|gemvNSP|gemmSN_|gemmk1_|cufft|nccl|(ampere|volta|turing|sm80|sm90|sm100)_[a-z0-9]*gemm|implicit_convolve_sgemm)'
for c in "${cases[@]}"; do
  case $c in
    reduce_staging | reduce_blocks)
      ks=(rows10 rows16 bias10 empty_half)
      limit=2000
      [ "$c" = reduce_blocks ] && ks=(rows10_loop tabular rows_half rows_tail rows_none) && limit=50000
      for k in "${ks[@]}"; do
        PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 "$NEW" --tool initcheck --xml \
          --save "$OUTDIR/$k.xml" --print-limit "$limit" --error-exitcode 86 \
          --kernel-name-exclude "$LIBS" --initcheck-track-filtered-global-memory yes \
          python3 "$P/reduce_staging.py" "$k" >"$OUTDIR/$k.out" 2>&1
        echo "== $k (exit $?)"
        python3 - "$OUTDIR/$k.xml" <<'PY'
import collections, re, sys
text = open(sys.argv[1], errors="replace").read()
records = re.findall(r"<record>.*?</record>", text, re.S)
by = collections.Counter()
for r in records:
    func = re.search(r"<func>(.*?)</func>", r, re.S)
    block = re.search(r"<blockIdx>\s*<x>(\d+)</x>\s*<y>(\d+)</y>", r, re.S)
    line = re.findall(r"reduce_staging\.py</path>\s*<line>(\d+)", r)
    by[(func.group(1)[:60] if func else "host API", block.groups() if block else None,
        "stack" if "<hostStack>" in r or "<frame>" in r else "no stack", line[-1] if line else None)] += 1
for key, n in by.most_common(8):
    print(f"  {n} x {key}")
print(f"  {len(records)} records")
runs = []
for r in records:
    pc = re.search(r"<pc>(.*?)</pc>", r, re.S)
    block = re.search(r"<blockIdx>\s*<x>(\d+)</x>\s*<y>(\d+)</y>\s*<z>(\d+)</z>", r, re.S)
    key = (pc.group(1) if pc else None, block.groups() if block else None)
    if runs and runs[-1][0] == key:
        runs[-1][1] += 1
    else:
        runs.append([key, 1])
print(f"  {len(runs)} runs of one PC and block, in order:")
for key, n in runs[:40]:
    print(f"    {n} x {key}")
PY
      done
      ;;
    rnn_names)
      timeout 120 python3 "$P/rnn_kernel_names.py" >"$OUTDIR/rnn-names.txt" 2>&1
      echo "== rnn_names (exit $?)"
      cat "$OUTDIR/rnn-names.txt"
      ;;
    moe_copies)
      hook=$(mktemp -d)
      PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$ROOT/src/tools/hook CUDAWATCH_HOOK_OUT=$hook \
        CUDAWATCH_STOP_AFTER_STEPS=2 timeout 200 "$NEW" --tool initcheck --xml \
        --save "$OUTDIR/moe.xml" --print-limit 2000 --error-exitcode 86 \
        --kernel-name kns=cudawatch_no_such_kernel --initcheck-track-filtered-global-memory yes \
        python3 "$ROOT/tests/gpu/real/train_moe.py" >"$OUTDIR/moe.out" 2>&1
      echo "== moe_copies (exit $?)"
      python3 "$P/copy_stacks_xml.py" "$OUTDIR/moe.xml" train_moe.py
      tail -3 "$OUTDIR/moe.out" | cut -c1-200
      ;;
    *) echo "unknown case $c" >&2 ;;
  esac
done
