#!/usr/bin/env bash
# Raw captures of the multi-GPU corpus (tests/gpu/multi/) on a machine with
# two GPUs: what torchrun, NCCL, PyTorch's flight recorder, compute-sanitizer
# and ncu really print for a two-rank program, before cudawatch reads any of
# it (sample-reports/multi/README.md says which file is which).
#
# Usage: scripts/capture-multi.sh OUTDIR [PHASE...]
#   phases: plain (each case under torchrun, CUDA_LAUNCH_BLOCKING=1 and not),
#           tree (pids, groups and sessions of torchrun's workers),
#           fr (the collective mismatch with the flight recorder on),
#           ncu (ncu over torchrun, NCCL's kernels left out, and not),
#           memcheck (compute-sanitizer over torchrun),
#           ranks (one compute-sanitizer per rank: torchrun's PYTHON_EXEC)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: capture-multi.sh OUTDIR}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/tests/gpu/multi
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
# shellcheck source=lib/record.sh
. "$ROOT/scripts/lib/record.sh"
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(plain tree fr ncu memcheck)
TR=(torchrun --standalone --nproc_per_node=2)
environment
cd "$SRC" || exit 1
# load_inline's build, once, outside every timed run.
RUN_TIMEOUT=300 record build oob_kernel_rank1 -- python3 -c 'import runpy, sys; sys.argv=["x"]; exec(open("oob_kernel_rank1.py").read().split("rank, world")[0])'

phase_plain() {
  local c
  for c in ddp_step bad_label_rank1 oob_kernel_rank1 oom_rank1 stream_race_rank1 collective_mismatch; do
    RUN_TIMEOUT=200 record plain "$c" -- env CUDA_LAUNCH_BLOCKING=1 "${TR[@]}" "$c.py" &
  done
  wait
  # The same without CUDA_LAUNCH_BLOCKING: does the plain run's setting
  # change what a two-rank NCCL program does?
  for c in bad_label_rank1 collective_mismatch; do
    RUN_TIMEOUT=200 record unblocked "$c" -- "${TR[@]}" "$c.py" &
  done
  wait
}

phase_tree() {
  local probe='import os, time; print("pid", os.getpid(), "ppid", os.getppid(), "pgid", os.getpgid(0), "sid", os.getsid(0), "rank", os.environ.get("RANK"), "local", os.environ.get("LOCAL_RANK"), "world", os.environ.get("WORLD_SIZE"), flush=True)'
  echo "$probe" >/tmp/tree_probe.py
  RUN_TIMEOUT=60 record tree tree -- bash -c 'echo launcher pid $$ pgid $(ps -o pgid= $$); torchrun --standalone --nproc_per_node=2 /tmp/tree_probe.py'
}

phase_fr() {
  mkdir -p "$OUTDIR/collective_mismatch/fr"
  RUN_TIMEOUT=200 record fr collective_mismatch -- env CUDA_LAUNCH_BLOCKING=1 \
    TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_FR_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 \
    TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$OUTDIR/collective_mismatch/fr/nccl_trace_rank_" \
    TORCH_FR_DUMP_TEMP_FILE="$OUTDIR/collective_mismatch/fr/fr_trace_rank_" \
    "${TR[@]}" collective_mismatch.py
  ls -la "$OUTDIR/collective_mismatch/fr" >"$OUTDIR/collective_mismatch/fr.ls" 2>&1
  python3 - "$OUTDIR/collective_mismatch/fr" >"$OUTDIR/collective_mismatch/fr.decoded" 2>&1 <<'PY'
import os, pickle, pprint, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    with open(os.path.join(d, name), "rb") as f:
        data = f.read()
    print("=====", name, len(data), "bytes")
    try:
        obj = pickle.loads(data)
    except Exception as e:
        import json
        try:
            obj = json.loads(data)
        except Exception:
            print("not pickle nor json:", e, data[:200]); continue
    pprint.pprint({k: v for k, v in obj.items() if k != "entries"}, width=140)
    for e in obj.get("entries", [])[-4:]:
        pprint.pprint(e, width=140)
PY
  which torchfrtrace >"$OUTDIR/collective_mismatch/torchfrtrace.which" 2>&1
  RUN_TIMEOUT=60 record frtrace collective_mismatch -- torchfrtrace "$OUTDIR/collective_mismatch/fr" --prefix nccl_trace_rank_
}

phase_ncu() {
  local filt='regex:^([^n]|n[^c]|nc[^c]|ncc[^l])'  # as cudawatch's ncu stage (no look-ahead)
  RUN_TIMEOUT=240 record ncu-no-nccl ddp_step -- ncu --target-processes all --clock-control none \
    --kernel-name "$filt" --launch-count 40 --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
    -f -o "$OUTDIR/ddp_step/ncu-no-nccl" "${TR[@]}" ddp_step.py
  RUN_TIMEOUT=90 record ncu-all ddp_step -- ncu --target-processes all --clock-control none \
    --launch-count 40 --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
    -f -o "$OUTDIR/ddp_step/ncu-all" "${TR[@]}" ddp_step.py
}

phase_memcheck() {
  RUN_TIMEOUT=300 record memcheck ddp_step -- env PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
    compute-sanitizer --tool memcheck --xml --save "$OUTDIR/ddp_step/memcheck.%p.xml" --print-limit 0 \
    --error-exitcode 86 --target-processes all "${TR[@]}" ddp_step.py &
  RUN_TIMEOUT=300 record memcheck oob_kernel_rank1 -- env PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
    compute-sanitizer --tool memcheck --xml --save "$OUTDIR/oob_kernel_rank1/memcheck.%p.xml" --print-limit 0 \
    --error-exitcode 86 --target-processes all "${TR[@]}" oob_kernel_rank1.py &
  wait
}

# One compute-sanitizer per rank, as cudawatch's sanitizer stages run a
# torchrun program: torchrun starts each worker as `$PYTHON_EXEC -u
# CASE.py`, here a script that runs the worker's Python under its own
# frontend; `%q{RANK}` names each rank's XML and text log. RUN names say
# the tool, and `-exit86` a frontend given `--error-exitcode 86` (which
# cudawatch's stages left out after this capture: see README.md).
phase_ranks() {
  local wrapper=$OUTDIR/rank-wrapper.sh c
  cat >"$wrapper" <<'SH'
#!/bin/sh
compute-sanitizer --tool "$CAPTURE_TOOL" --xml --save "$CAPTURE_DIR/$CAPTURE_TOOL.rank%q{RANK}.xml" \
  --log-file "$CAPTURE_DIR/$CAPTURE_TOOL.rank%q{RANK}.log" --print-limit 0 $CAPTURE_EXITCODE \
  --target-processes all "$(command -v python3)" "$@"
status=$?
echo "$status" >"$CAPTURE_DIR/$CAPTURE_TOOL.rank$RANK.exit"
exit "$status"
SH
  chmod +x "$wrapper"
  for c in oob_kernel_rank1:memcheck: ddp_step:memcheck: ddp_step:initcheck: ddp_step:memcheck:86; do
    local case=${c%%:*} rest=${c#*:}
    local tool=${rest%%:*} code=${rest#*:} run flag=
    run=ranks-$tool
    [ -n "$code" ] && run=$run-exit$code flag="--error-exitcode $code"
    mkdir -p "$OUTDIR/$case/$run"
    RUN_TIMEOUT=300 record "$run" "$case" -- env PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
      PYTHON_EXEC="$wrapper" CAPTURE_TOOL="$tool" CAPTURE_DIR="$OUTDIR/$case/$run" \
      CAPTURE_EXITCODE="$flag" "${TR[@]}" "$case.py" &
  done
  wait
}

for p in "${phases[@]}"; do
  echo "== phase $p $(date +%T)"
  "phase_$p"
done
