#!/usr/bin/env bash
# Where a long stage spends its time, on the GPU machine, with the tools
# alone (no cudawatch): the numbers behind the stage defaults in
# docs/tool-surprises.md ("What a stage costs").
#
#   ncu     ncu's profiling run of NCU_PROGRAM as the stage runs it, then
#           without the SourceCounters section, then with call stacks
#           (native and Python): wall time and passes per kernel.
#   ncu-levers  what ncu's time is made of on NCU_PROGRAM: the stage's
#           profile, the four request and sector counters alone, the
#           stage's metrics with cudawatch's CoalescingSource section (only
#           the source-level counters the report reads) instead of
#           SourceCounters, and that without vendor matrix kernels. Prints
#           seconds, passes and the time per profiled launch, and checks
#           that the lean section still gives the per-line rows.
#   ncu-tail  where the time after the last profiled launch goes (the
#           program's output unbuffered and stamped), following every
#           process and the program alone, and on ResNet-18's step.
#   ncu-sass  request and sector counts from SASS instrumentation instead
#           of l1tex hardware counters: passes and figures on the strided
#           gather.
#   ncu-bytes  per-direction sectors from SASS alone: the available
#           smsp__sass_*global* metrics, then the strided gather and
#           SASS_PROGRAM (the MLP step) profiled with the stage's metrics
#           and with SASS requests + bytes + bytes-per-sector (sectors =
#           bytes / (32 x pct)), each with the lean section: passes,
#           seconds, and both sets of figures side by side.
#   ncu-stacks  the stage's profile (application-only, lean section) with
#           and without --call-stack (native and Python) on SASS_PROGRAM
#           and NCU_PROGRAM, one after another: seconds, launches.
#   ncu-per-kernel  the stage's profile of PER_KERNEL_PROGRAM (ViT-tiny's
#           step) per kernel and launch configuration, then per kernel
#           function (`--kernel-id ::regex:.*:1`): seconds, launches.
#   backtraces  racecheck and synccheck on BT_PROGRAM (ViT-tiny's step)
#           as the stages run them and with `--show-backtrace device`
#           (no host unwinding per record), the four AT ONCE under
#           BT_TIMEOUT: seconds, records, the tool's summary.
#   floods  initcheck on FLOOD_PROGRAM (ResNet-18's step: ~40k records in
#           cuDNN) as the stage runs it and with each lever on the record
#           cost: no host backtraces, 8 host frames, text only, a print
#           limit. The variants run AT ONCE on the one GPU (each alone
#           would not fit one call): compare them with each other, not
#           with a run alone. Prints seconds, records, XML size and the
#           tool's own ERROR SUMMARY, and times `cudawatch parse` of the
#           full XML when target/release/cudawatch is there.
#
#   racecheck-levers  racecheck on RACE_PROGRAM (ResNet-18's step) ALONE,
#           one variant after another: as the stage runs it, with more
#           analysis workers, with hazard reports instead of analysis,
#           without cp.async tracking (RACE_VARIANTS picks among those
#           and: no-wgmma, no-bulk, neither: without the checks of Hopper's
#           wgmma and cp.async.bulk instructions; no-indirect: without
#           tracking orderings made through another barrier,
#           NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING=0). Seconds, the tool
#           process's CPU seconds, the GPU's busy share, the tool's summary
#           and the kernels of its records.
#   print-limit  the floods of BT_PROGRAM (ViT-tiny's step) with a print
#           limit: synccheck and initcheck (device stacks) with
#           `--print-limit 1000`, and synccheck without the flooding
#           kernel (`--kernel-name-exclude`), AT ONCE: seconds, records
#           printed, the tool's summary (the total it still counts).
#   allocator  racecheck and synccheck on MIX_PROGRAM (ResNet-18's step)
#           ALONE, with PyTorch's caching allocator off (as memcheck and
#           initcheck need it) and on: seconds, CPU seconds, GPU busy share,
#           the tool's summary and hazards per kernel.
#   ncu-alone  the ncu stage on MIX_PROGRAM alone: as `cudawatch run -j 1
#           --stages plain,ncu` runs it (after the plain run), and the
#           stage's profile by hand with and without Python call stacks.
#   ncu-contention  the ncu stage beside racecheck and initcheck (what
#           slows it twofold on ResNet-18's step): `cudawatch run --stages
#           plain,racecheck,initcheck,ncu` on MIX_PROGRAM with ncu as the
#           stage runs it, without flushing caches between passes, and with
#           fewer counters (replay passes): each stage's seconds and ncu's
#           passes per launch. The variants are ncu wrappers (`--ncu`) that
#           change the profiling run only; CONTENTION_VARIANTS picks among
#           them and no-vendor (vendor matrix kernels left out of the
#           profile, as in ncu-levers).
#   mix     which stages slow which when they share the GPU: `cudawatch
#           run` on MIX_PROGRAM with default settings (the GPU's busy share
#           sampled), then with the plain run and ncu only, the plain run
#           and the three long stages (ncu, racecheck, initcheck), and the
#           plain run and the four short ones: wall time and each stage's.
#   racecheck-ranges  racecheck told to check launch ranges only
#           (`--launch-skip`/`--launch-count`, as a user might to make it
#           cheaper), all at once: ResNet-18's step (RACE_PROGRAM) whole,
#           in ranges of 64 and past its last launch; ViT-tiny's step
#           (BT_PROGRAM) whole and in quarters of its launches (counted by
#           torch's profiler). Per range: seconds, exit, CPU, the tool's
#           summary, whether the program crashed under it, and whose the
#           hazards are. Then the ncu stage beside racecheck alone
#           (`cudawatch run --stages plain,racecheck,ncu`).
#   mps     the same stages with the GPU shared through a private MPS
#           daemon (CUDA's Multi-Process Service: kernels of different
#           processes run side by side instead of taking turns): whether
#           compute-sanitizer and ncu work as MPS clients at all (a tiny
#           kernel under each), then `cudawatch run --stages
#           plain,racecheck,ncu` and with default settings on MIX_PROGRAM,
#           each without MPS and with it. Seconds, each stage's time and
#           outcome, and whether the stages' processes were MPS clients.
#   ncu-shards  the ncu stage's profile cut into K ncu processes at once
#           (SHARDS, default "1 2 3"), each profiling the kernels whose
#           name's length is k modulo K, in a `cudawatch run` with default
#           settings on MIX_PROGRAM: the whole check's and each stage's
#           seconds, and each shard's seconds and launches profiled. Only
#           shard 0's profile reaches the report (a measure of time).
#   racecheck-phases  where racecheck's time goes on ViT-tiny's step
#           (benches/vit_phases.py: the step with each phase stamped), ALONE,
#           one run after another: plainly, racecheck as the stage runs it,
#           with `--racecheck-detect-level error`, with eager module loading
#           (CUDA_MODULE_LOADING=EAGER), and memcheck as its stage runs it.
#           With NEW_SANITIZER (a compute-sanitizer of another release, e.g.
#           2026.4 from the PyPI wheel nvidia-cuda-sanitizer-api, unpacked,
#           never committed) also: `new` (racecheck as the stage runs it),
#           `new-cluster0` (`--racecheck-filter-cluster-id 0`: only block or
#           cluster 0 of each launch analysed, 2026.3+) and `new-nobarrier`
#           (NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING=0).
#           PHASE_PROGRAM: another program (ResNet-18's step): only its
#           wall time then. With NEW_SANITIZER, user_race-cluster0.txt:
#           the planted race of tests/gpu/real/user_kernel_race.py under
#           the newer racecheck with `--racecheck-filter-cluster-id 0`.
#           Per run: the seconds at each phase's end (import torch, import
#           timm, model on the GPU, forward, backward, optimizer step, a
#           second step, exit) and the whole run's.
#
# Usage: benches/stage-costs.sh OUTDIR [ncu] [ncu-levers] [ncu-tail] [ncu-sass] [ncu-bytes] [ncu-stacks] [ncu-per-kernel] [backtraces] [floods] [racecheck-levers] [print-limit] [allocator] [ncu-alone] [ncu-contention] [mix] [racecheck-ranges] [mps] [ncu-shards] [racecheck-phases] [framework-filter]
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: stage-costs.sh OUTDIR [ncu] [ncu-levers] [ncu-tail] [ncu-sass] [floods]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH=$PATH:/usr/local/cuda/bin
PY=${PY:-python3}
NCU_PROGRAM=${NCU_PROGRAM:-$ROOT/tests/gpu/real/dataloader_amp_step.py}
FLOOD_PROGRAM=${FLOOD_PROGRAM:-$ROOT/tests/gpu/real/resnet_step.py}
FLOOD_TIMEOUT=${FLOOD_TIMEOUT:-300}
RACE_PROGRAM=${RACE_PROGRAM:-$ROOT/tests/gpu/real/resnet_step.py}
MIX_PROGRAM=${MIX_PROGRAM:-$ROOT/tests/gpu/real/resnet_step.py}
CW=${CW:-$ROOT/target/release/cudawatch}
# cuBLAS/cuDNN/CUTLASS matrix kernels: tuned by their vendors, never the
# user's to fix; ECMAScript regex, as ncu's --kernel-name reads it.
NOLIB='regex:^(?!.*(gemm|nvjet|cutlass|xmma|cudnn|cublas|sm90_|sm80_)).*$'
METRICS=$(sed -n '/^pub const METRICS/,/";/p' "$ROOT/src/tools/ncu/argv.rs" |
  tr -d '\\\n' | sed 's/.*= *"//; s/";.*//; s/ //g')

# timed NAME TIMEOUT CMD...: runs CMD, keeping stdout/stderr and seconds.
timed() {
  local name=$1 limit=$2
  shift 2
  local start end rc
  start=$(date +%s.%N)
  timeout "$limit" "$@" >"$OUTDIR/$name.out" 2>"$OUTDIR/$name.err" </dev/null
  rc=$?
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }' >"$OUTDIR/$name.seconds"
  echo "$rc" >"$OUTDIR/$name.exit"
}

# xml_kernels XML N: the N kernels with most records in a sanitizer XML.
xml_kernels() {
  grep -o '<name>[^<]*</name>' "$1" 2>/dev/null | sort | uniq -c | sort -rn | head -"$2"
}

ncu_costs() {
  local base=(ncu --target-processes all --clock-control none --metrics "$METRICS"
    --filter-mode per-launch-config --launch-count 1 -f)
  timed plain 300 $PY "$NCU_PROGRAM"
  timed ncu-stage 300 "${base[@]}" --section SourceCounters --import-source yes \
    -o "$OUTDIR/ncu-stage" $PY "$NCU_PROGRAM"
  timed ncu-metrics 300 "${base[@]}" -o "$OUTDIR/ncu-metrics" $PY "$NCU_PROGRAM"
  timed ncu-stacks 300 "${base[@]}" --section SourceCounters --import-source yes \
    --call-stack --call-stack-type native --call-stack-type python \
    -o "$OUTDIR/ncu-stacks" $PY "$NCU_PROGRAM"
  {
    printf '%-12s %8s %5s %8s %12s\n' variant seconds exit kernels passes/kernel
    for v in plain ncu-stage ncu-metrics ncu-stacks; do
      local kernels passes
      kernels=$(grep -c '==PROF== Profiling' "$OUTDIR/$v.out" "$OUTDIR/$v.err" 2>/dev/null |
        awk -F: '{ s += $2 } END { print s + 0 }')
      passes=$(cat "$OUTDIR/$v.out" "$OUTDIR/$v.err" | grep -o '[0-9]* passes' |
        awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n; else print "-" }')
      printf '%-12s %8s %5s %8s %12s\n' "$v" "$(cat "$OUTDIR/$v.seconds")" \
        "$(cat "$OUTDIR/$v.exit")" "$kernels" "$passes"
    done
  } | tee "$OUTDIR/ncu-summary.txt"
}

# stamped NAME CMD...: like timed, with each output line of CMD prefixed by
# the second it came, so the time between ncu's "==PROF== Profiling" lines
# is one profiled launch's cost.
stamped() {
  local name=$1
  shift
  timed "$name" 300 bash -c '"$@" 2>&1 | while IFS= read -r l; do
    printf "%s %s\n" "$(date +%s.%N)" "$l"; done' _ "$@"
}

ncu_levers() {
  local base=(ncu --target-processes all --clock-control none
    --filter-mode per-launch-config --launch-count 1 -f)
  local counters="l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
  local lean=(--metrics "$METRICS" --section-folder "$ROOT/src/tools/ncu"
    --section CoalescingSource --import-source yes)
  timed plain 300 $PY "$NCU_PROGRAM"
  stamped ncu-stage "${base[@]}" --metrics "$METRICS" --section SourceCounters \
    --import-source yes -o /tmp/lev-stage $PY "$NCU_PROGRAM"
  stamped ncu-counters "${base[@]}" --metrics "$counters" -o /tmp/lev-counters $PY "$NCU_PROGRAM"
  stamped ncu-lean "${base[@]}" "${lean[@]}" -o /tmp/lev-lean $PY "$NCU_PROGRAM"
  stamped ncu-lean-nolib "${base[@]}" "${lean[@]}" --kernel-name "$NOLIB" \
    -o /tmp/lev-nolib $PY "$NCU_PROGRAM"
  {
    printf '%-15s %8s %5s %8s %12s %s\n' variant seconds exit kernels passes/kernel \
      "first-PROF..last (s)"
    for v in plain ncu-stage ncu-counters ncu-lean ncu-lean-nolib; do
      local all kernels passes span
      all=$(cat "$OUTDIR/$v.out" "$OUTDIR/$v.err")
      kernels=$(grep -c '==PROF== Profiling' <<<"$all")
      passes=$(grep -o '[0-9]* passes' <<<"$all" |
        awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n; else print "-" }')
      span=$(grep '==PROF== Profiling' <<<"$all" | awk 'NR == 1 { a = $1 } { b = $1 }
        END { if (NR) printf "%.1f", b - a; else print "-" }')
      printf '%-15s %8s %5s %8s %12s %s\n' "$v" "$(cat "$OUTDIR/$v.seconds")" \
        "$(cat "$OUTDIR/$v.exit")" "$kernels" "$passes" "$span"
    done
    echo "slowest launches of ncu-lean (seconds to the next line, kernel):"
    grep -E '==PROF== (Profiling|Disconnected)|==PROF== Report' "$OUTDIR/ncu-lean.out" |
      awk '{ if (p) printf "%6.2f %s\n", $1 - t, substr(p, 1, 110); t = $1; p = $0 }' |
      sort -rn | head -8
    echo "kernels of ncu-lean: $(grep -o 'Profiling "[^"]*"' "$OUTDIR/ncu-lean.out" | sort | uniq -c | sort -rn | head -40 | tr '\n' ';')"
    # The corpus' strided kernel, built with -lineinfo, under the lean
    # metrics: do the per-line rows still come, with the same figures?
    nvcc -lineinfo -arch=sm_90 -o /tmp/lev-coalescing "$ROOT/tests/gpu/coalescing.cu" &&
      for v in lean stage; do
        local extra=("${lean[@]}")
        [ $v = stage ] && extra=(--metrics "$METRICS" --section SourceCounters --import-source yes)
        "${base[@]}" "${extra[@]}" -o /tmp/lev-co-$v /tmp/lev-coalescing >"$OUTDIR/co-$v.log" 2>&1
        echo "coalescing.cu, $v: $(grep -o '[0-9]* passes' "$OUTDIR/co-$v.log" | tr '\n' ' ')"
        ncu --import /tmp/lev-co-$v.ncu-rep --csv --page source --print-source cuda,sass \
          --print-units base --launch-skip 1 --launch-count 1 >"$OUTDIR/coalescing-source-$v.csv" 2>&1
        grep -m1 '"Line No"' "$OUTDIR/coalescing-source-$v.csv" | cut -c1-400
        grep -E '^"[0-9]+"' "$OUTDIR/coalescing-source-$v.csv" | grep -v '"0","0","0"' | head -3 | cut -c1-300
      done
  } | tee "$OUTDIR/levers-summary.txt"
}

# Where the time after the last profiled launch goes: the program's
# output unbuffered (its lines stamped when printed), with ncu following
# every process as the stage does and following the program alone; and
# on TAIL_PROGRAM (ResNet-18's step) too.
ncu_tail() {
  local base=(ncu --clock-control none --filter-mode per-launch-config --launch-count 1 -f
    --metrics "$METRICS" --section-folder "$ROOT/src/tools/ncu" --section CoalescingSource
    --import-source yes)
  local tail_program=${TAIL_PROGRAM:-$ROOT/tests/gpu/real/resnet_step.py}
  export PYTHONUNBUFFERED=1
  stamped tail-all "${base[@]}" --target-processes all -o /tmp/tail-all $PY "$NCU_PROGRAM"
  stamped tail-app "${base[@]}" --target-processes application-only -o /tmp/tail-app \
    $PY "$NCU_PROGRAM"
  timed tail-plain2 300 $PY "$tail_program"
  stamped tail-resnet "${base[@]}" --target-processes all -o /tmp/tail-resnet $PY "$tail_program"
  unset PYTHONUNBUFFERED
  {
    for v in tail-all tail-app tail-plain2 tail-resnet; do
      echo "== $v: $(cat "$OUTDIR/$v.seconds") s, exit $(cat "$OUTDIR/$v.exit"), $(grep -c '==PROF== Profiling' "$OUTDIR/$v.out") launches"
      grep -v '==PROF== Profiling' "$OUTDIR/$v.out" | awk 'NR == 1 { a = $1 } { printf "%7.2f %s\n", $1 - a, substr($0, index($0, $2), 120) }' | head -30
      echo "last profiled launch at: $(grep '==PROF== Profiling' "$OUTDIR/$v.out" | tail -1 | awk -v a="$(head -1 "$OUTDIR/$v.out" | cut -d' ' -f1)" '{ printf "%.2f", $1 - a }')"
    done
  } | tee "$OUTDIR/tail-summary.txt"
}

# Whether the per-direction request and sector counts can come from SASS
# instrumentation (collected with the section's source counters) instead
# of l1tex hardware counters, which take 4 passes of their own: passes and
# figures of the corpus' strided gather under each set.
ncu_sass() {
  local sass="smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_global_st.sum,smsp__sass_sectors_mem_global_op_ld.sum,smsp__sass_sectors_mem_global_op_st.sum,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"
  local base=(ncu --target-processes all --clock-control none -f --section-folder
    "$ROOT/src/tools/ncu" --section CoalescingSource --import-source yes)
  nvcc -lineinfo -arch=sm_90 -o /tmp/sass-coalescing "$ROOT/tests/gpu/coalescing.cu" || return 1
  {
    for v in stage sass sass-duration; do
      local m=$METRICS
      [ $v = sass ] && m=$sass
      [ $v = sass-duration ] && m=$sass,gpu__time_duration.sum
      "${base[@]}" --metrics "$m" -o /tmp/sass-$v /tmp/sass-coalescing >"$OUTDIR/sass-$v.log" 2>&1
      echo "== $v: $(grep -o '[0-9]* passes' "$OUTDIR/sass-$v.log" | tr '\n' ' ') $(grep -m2 ERROR "$OUTDIR/sass-$v.log")"
      ncu --import /tmp/sass-$v.ncu-rep --csv --page raw --print-units base 2>&1 |
        python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
if not rows: sys.exit()
h = rows[0]
for r in rows[2:]:
    d = dict(zip(h, r))
    print(d.get("Kernel Name", "?")[:20], {k: v for k, v in d.items()
        if ("global" in k or "duration" in k or "sectors" in k) and "pct" not in k})'
    done
  } | tee "$OUTDIR/sass-summary.txt"
}

# The ncu stage's profile as it runs now, metrics left to each variant.
LEAN=(ncu --target-processes application-only --clock-control none -f --section-folder
  "$ROOT/src/tools/ncu" --section CoalescingSource --import-source yes
  --filter-mode per-launch-config --launch-count 1)
SASS_PROGRAM=${SASS_PROGRAM:-$ROOT/tests/gpu/torch_train_clean.py}
SASS_METRICS="smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_global_st.sum,smsp__sass_data_bytes_mem_global_op_ld.sum,smsp__sass_data_bytes_mem_global_op_st.sum,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct,gpu__time_duration.sum"

ncu_bytes() {
  ncu --query-metrics --chip gh100 2>&1 | grep -E '^smsp__sass_(inst_executed_op_global|data_bytes_mem_global|sectors_mem_global|average_data_bytes_per_sector_mem_global)' \
    >"$OUTDIR/bytes-metrics.txt"
  local base=("${LEAN[@]}")
  nvcc -lineinfo -arch=sm_90 -o /tmp/bytes-coalescing "$ROOT/tests/gpu/coalescing.cu" || return 1
  timed bytes-plain 300 $PY "$SASS_PROGRAM"
  for v in l1tex sass; do
    local m=$METRICS
    [ $v = sass ] && m=$SASS_METRICS
    "${base[@]}" --metrics "$m" -o /tmp/bytes-gather-$v /tmp/bytes-coalescing >"$OUTDIR/bytes-gather-$v.log" 2>&1
    timed bytes-step-$v 300 "${base[@]}" --metrics "$m" -o /tmp/bytes-step-$v $PY "$SASS_PROGRAM"
  done
  {
    echo "== available:"; cat "$OUTDIR/bytes-metrics.txt"
    for v in l1tex sass; do
      echo "== $v: gather $(grep -o '[0-9]* passes' "$OUTDIR/bytes-gather-$v.log" | sort -u | tr '\n' ' ')" \
        "step $(cat "$OUTDIR/bytes-step-$v.seconds") s (plain $(cat "$OUTDIR/bytes-plain.seconds") s)," \
        "$(grep -o '[0-9]* passes' "$OUTDIR/bytes-step-$v.err" "$OUTDIR/bytes-step-$v.out" 2>/dev/null | awk -F: '{print $2}' | sort | uniq -c | tr '\n' ' ')"
      for what in gather step; do
        ncu --import /tmp/bytes-$what-$v.ncu-rep --csv --page raw --print-units base 2>/dev/null |
          python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
if not rows: sys.exit()
h = rows[0]
for r in rows[2:]:
    d = dict(zip(h, r))
    f = lambda k: float(d.get(k, "nan").replace(",", "") or "nan")
    out = {}
    for op in ("ld", "st"):
        if "l1tex__t_requests_pipe_lsu_mem_global_op_" + op + ".sum" in d:
            req = f("l1tex__t_requests_pipe_lsu_mem_global_op_" + op + ".sum")
            sec = f("l1tex__t_sectors_pipe_lsu_mem_global_op_" + op + ".sum")
        else:
            req = f("smsp__sass_inst_executed_op_global_" + op + ".sum")
            by = f("smsp__sass_data_bytes_mem_global_op_" + op + ".sum")
            pct = f("smsp__sass_average_data_bytes_per_sector_mem_global_op_" + op + ".pct")
            sec = by / (32 * pct / 100) if pct == pct and pct > 0 else 0.0
        out[op] = "req %.0f sect %.0f" % (req, sec)
    print("  ", d.get("Kernel Name", "?")[:40], d.get("Grid Size", ""), out)'
      done
    done
  } | tee "$OUTDIR/bytes-summary.txt"
}

ncu_stacks() {
  local base=("${LEAN[@]}" --metrics "$METRICS")
  local stacks=(--call-stack --call-stack-type native --call-stack-type python)
  {
    for p in "$SASS_PROGRAM" "$NCU_PROGRAM"; do
      local n
      n=$(basename "$p" .py)
      timed stacks-$n-plain 300 $PY "$p"
      timed stacks-$n-without 300 "${base[@]}" -o /tmp/stacks-$n-without $PY "$p"
      timed stacks-$n-with 300 "${base[@]}" "${stacks[@]}" -o /tmp/stacks-$n-with $PY "$p"
      echo "$n: plain $(cat "$OUTDIR/stacks-$n-plain.seconds") s," \
        "without stacks $(cat "$OUTDIR/stacks-$n-without.seconds") s," \
        "with stacks $(cat "$OUTDIR/stacks-$n-with.seconds") s," \
        "launches $(grep -c '==PROF== Profiling' "$OUTDIR/stacks-$n-with.err" "$OUTDIR/stacks-$n-with.out" | awk -F: '{ s += $2 } END { print s + 0 }')"
    done
  } | tee "$OUTDIR/stacks-summary.txt"
}

# ncu-per-kernel: the stage's profile of PER_KERNEL_PROGRAM (ViT-tiny's
# step) as it runs (one launch per kernel and launch configuration) and with
# one launch per kernel function instead (`--kernel-id ::regex:.*:1`, the
# first invocation of each mangled name), one after the other, the
# program alone: seconds and launches profiled each way.
PER_KERNEL_PROGRAM=${PER_KERNEL_PROGRAM:-$ROOT/tests/gpu/real/vit_tiny_step.py}
ncu_per_kernel() {
  local base=(ncu --target-processes application-only --clock-control none -f --section-folder
    "$ROOT/src/tools/ncu" --section CoalescingSource --import-source yes --metrics "$METRICS"
    --call-stack --call-stack-type python)
  timed per-kernel-plain 300 $PY "$PER_KERNEL_PROGRAM"
  timed per-kernel-config 300 "${base[@]}" --filter-mode per-launch-config --launch-count 1 \
    -o /tmp/per-kernel-config $PY "$PER_KERNEL_PROGRAM"
  timed per-kernel-function 300 "${base[@]}" --kernel-name-base mangled \
    --kernel-id '::regex:.*:1' -o /tmp/per-kernel-function $PY "$PER_KERNEL_PROGRAM"
  for v in plain config function; do
    echo "$v: $(cat "$OUTDIR/per-kernel-$v.seconds") s, exit $(cat "$OUTDIR/per-kernel-$v.exit")," \
      "launches $(cat "$OUTDIR/per-kernel-$v.out" "$OUTDIR/per-kernel-$v.err" | grep -c '==PROF== Profiling')," \
      "kernels $(cat "$OUTDIR/per-kernel-$v.out" "$OUTDIR/per-kernel-$v.err" | grep '==PROF== Profiling' | sed 's/ - [0-9]* (.*//' | sort -u | wc -l)"
  done | tee "$OUTDIR/per-kernel-summary.txt"
}

BT_PROGRAM=${BT_PROGRAM:-$ROOT/tests/gpu/real/vit_tiny_step.py}
BT_TIMEOUT=${BT_TIMEOUT:-400}

backtrace_costs() {
  mkdir -p "$OUTDIR/bt"
  local run=(env PYTORCH_NO_CUDA_MEMORY_CACHING=1 $PY "$BT_PROGRAM")
  for tool in racecheck synccheck; do
    local cs=(compute-sanitizer --tool $tool --error-exitcode 86 --target-processes all
      --destroy-on-device-error kernel --print-limit 0)
    timed bt/$tool-stage "$BT_TIMEOUT" "${cs[@]}" --xml --save "$OUTDIR/bt/$tool-stage.xml" "${run[@]}" &
    timed bt/$tool-device "$BT_TIMEOUT" "${cs[@]}" --xml --save "$OUTDIR/bt/$tool-device.xml" \
      --show-backtrace device "${run[@]}" &
  done
  wait
  {
    printf '%-18s %8s %5s %9s %9s  %s\n' variant seconds exit records xml-MB summary
    for v in racecheck-stage racecheck-device synccheck-stage synccheck-device; do
      local f=$OUTDIR/bt/$v
      printf '%-18s %8s %5s %9s %9s  %s\n' "$v" "$(cat "$f.seconds")" "$(cat "$f.exit")" \
        "$(grep -c '<record>' "$f.xml" 2>/dev/null)" \
        "$(du -m "$f.xml" 2>/dev/null | cut -f1)" \
        "$(grep -h -E 'SUMMARY' "$f.out" "$f.err" | tail -1)"
    done
    # What the records are: the kernels they name, most first.
    for v in racecheck-device synccheck-device; do
      echo "== $v kernels:"
      xml_kernels "$OUTDIR/bt/$v.xml" 5
    done
    rm -f "$OUTDIR"/bt/*.xml
  } | tee "$OUTDIR/backtraces-summary.txt"
}

flood_costs() {
  local cs=(compute-sanitizer --tool initcheck --error-exitcode 86 --target-processes all)
  local run=(env PYTORCH_NO_CUDA_MEMORY_CACHING=1 $PY "$FLOOD_PROGRAM")
  mkdir -p "$OUTDIR/floods"
  timed floods/stage "$FLOOD_TIMEOUT" "${cs[@]}" --xml --save "$OUTDIR/floods/stage.xml" \
    --print-limit 0 "${run[@]}" &
  timed floods/no-host "$FLOOD_TIMEOUT" "${cs[@]}" --xml --save "$OUTDIR/floods/no-host.xml" \
    --print-limit 0 --show-backtrace device "${run[@]}" &
  timed floods/host8 "$FLOOD_TIMEOUT" "${cs[@]}" --xml --save "$OUTDIR/floods/host8.xml" \
    --print-limit 0 --num-callers-host 8 "${run[@]}" &
  timed floods/text "$FLOOD_TIMEOUT" "${cs[@]}" --print-limit 0 "${run[@]}" &
  timed floods/limit "$FLOOD_TIMEOUT" "${cs[@]}" --xml --save "$OUTDIR/floods/limit.xml" \
    --print-limit 2000 "${run[@]}" &
  wait
  {
    printf '%-8s %8s %5s %9s %10s  %s\n' variant seconds exit records xml-MB summary
    for v in stage no-host host8 text limit; do
      local f=$OUTDIR/floods/$v records size
      if [ -f "$f.xml" ]; then
        records=$(grep -c '<record>' "$f.xml")
        size=$(du -m "$f.xml" | cut -f1)
      else
        records=$(grep -c '^========= Uninitialized' "$f.out")
        size=-
      fi
      printf '%-8s %8s %5s %9s %10s  %s\n' "$v" "$(cat "$f.seconds")" "$(cat "$f.exit")" \
        "$records" "$size" "$(grep -h 'ERROR SUMMARY' "$f.out" | tr '\n' ' ')"
    done
    if [ -x "$ROOT/target/release/cudawatch" ] && [ -f "$OUTDIR/floods/stage.xml" ]; then
      local start end
      start=$(date +%s.%N)
      "$ROOT/target/release/cudawatch" --color never parse --format json \
        "$OUTDIR/floods/stage.xml" >/dev/null 2>&1
      end=$(date +%s.%N)
      awk -v a="$start" -v b="$end" 'BEGIN { printf "cudawatch parse of the stage XML: %.1f s\n", b - a }'
    fi
  } | tee "$OUTDIR/floods-summary.txt"
}

# gpu_busy FILE: samples the GPU's utilisation every 500 ms into FILE
# until killed; prints its PID.
gpu_busy() {
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 500 >"$1" 2>/dev/null &
  echo $!
}

# timed_tool NAME CMD...: like timed, with the command's CPU seconds in
# NAME.cpu (bash's own `time`: the process tree's) and the GPU's busy share
# sampled into NAME.busy while it runs.
timed_tool() {
  local name=$1 smi
  shift
  smi=$(gpu_busy "$OUTDIR/$name.busy")
  { TIMEFORMAT='%R %U %S'; time timed "$name" 300 "$@"; } 2>"$OUTDIR/$name.cpu"
  kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
}

# tool_row WIDTH VARIANT FILE: one row of a tool variant's summary from
# FILE.{seconds,exit,cpu,busy,out,err}: seconds, exit, CPU user and system
# seconds, the GPU's mean busy share, the tool's summary lines.
tool_row() {
  local f=$3
  printf "%-${1}s %8s %5s %9s %9s %7s%%  %s\n" "$2" "$(cat "$f.seconds")" "$(cat "$f.exit")" \
    "$(awk '{print $2}' "$f.cpu")" "$(awk '{print $3}' "$f.cpu")" \
    "$(awk '{s+=$1; n++} END {if (n) printf "%.0f", s/n}' "$f.busy")" \
    "$(grep -h -E 'SUMMARY' "$f.out" "$f.err" | tr '\n' ' ')"
}

# stage_times REPORT: each stage of a cudawatch report, "tool=seconds:outcome".
stage_times() {
  python3 -c 'import json, sys
print(" ".join("%s=%.0f:%s" % (s["tool"], s.get("seconds") or 0, s["outcome"])
               for s in json.load(open(sys.argv[1]))["stages"]))' "$1" 2>&1
}

racecheck_levers() {
  mkdir -p "$OUTDIR/race"
  compute-sanitizer --help >"$OUTDIR/race/help.txt" 2>&1
  local run=(env PYTORCH_NO_CUDA_MEMORY_CACHING=1 $PY "$RACE_PROGRAM")
  local cs=(compute-sanitizer --tool racecheck --error-exitcode 86 --target-processes all
    --print-limit 0)
  timed race/plain 300 $PY "$RACE_PROGRAM"
  local v extra variants pre
  read -ra variants <<<"${RACE_VARIANTS:-stage workers8 hazard no-async}"
  for v in "${variants[@]}"; do
    pre=()
    case $v in
      stage) extra=() ;;
      # racecheck's tracking of orderings made through another barrier
      # (cuda::barrier, mbarrier), on since 2024.4; the variable is what the
      # manual names for turning it off where it "might severely impact
      # performance". Hazards ordered only that way may be misreported.
      no-indirect) extra=(); pre=(env NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING=0) ;;
      workers8) extra=(--racecheck-num-workers 8) ;;
      hazard) extra=(--racecheck-report hazard) ;;
      no-async) extra=(--racecheck-memcpy-async no) ;;
      no-wgmma) extra=(--check-warpgroup-mma no) ;;
      no-bulk) extra=(--check-bulk-copy no) ;;
      neither) extra=(--check-warpgroup-mma no --check-bulk-copy no) ;;
      *) echo "unknown racecheck variant $v" >&2; continue ;;
    esac
    timed_tool race/$v "${pre[@]}" "${cs[@]}" "${extra[@]}" --xml --save "$OUTDIR/race/$v.xml" "${run[@]}"
  done
  {
    printf '%-9s %8s %5s %9s %9s %8s  %s\n' variant seconds exit cpu-user cpu-sys gpu-busy summary
    printf '%-9s %8s\n' plain "$(cat "$OUTDIR/race/plain.seconds")"
    for v in "${variants[@]}"; do
      tool_row 9 "$v" "$OUTDIR/race/$v"
      # whose the hazards are: each record's kernel
      grep -o '<func>[^<]*</func>' "$OUTDIR/race/$v.xml" 2>/dev/null | sed 's/<[/]*func>//g' |
        cut -c1-80 | sort | uniq -c | sort -rn | head -3 | sed 's/^/            /'
    done
    grep -A4 -i 'racecheck-num-workers\|racecheck-memcpy-async' "$OUTDIR/race/help.txt"
    rm -f "$OUTDIR"/race/*.xml
  } | tee "$OUTDIR/racecheck-levers-summary.txt"
}

racecheck_phases() {
  mkdir -p "$OUTDIR/phases"
  local prog=${PHASE_PROGRAM:-$ROOT/benches/vit_phases.py}
  local cs=(compute-sanitizer --error-exitcode 86 --target-processes all --print-limit 0)
  local new=("${NEW_SANITIZER:-compute-sanitizer}" --error-exitcode 86 --target-processes all
    --print-limit 0)
  local v variants
  read -ra variants <<<"${PHASE_VARIANTS:-plain racecheck error-level eager memcheck}"
  for v in "${variants[@]}"; do
    case $v in
      plain) timed_tool phases/$v $PY "$prog" ;;
      racecheck) timed_tool phases/$v env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${cs[@]}" \
        --tool racecheck $PY "$prog" ;;
      error-level) timed_tool phases/$v env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${cs[@]}" \
        --tool racecheck --racecheck-detect-level error $PY "$prog" ;;
      eager) timed_tool phases/$v env PYTORCH_NO_CUDA_MEMORY_CACHING=1 CUDA_MODULE_LOADING=EAGER \
        "${cs[@]}" --tool racecheck $PY "$prog" ;;
      memcheck) timed_tool phases/$v env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${cs[@]}" \
        --tool memcheck $PY "$prog" ;;
      new) timed_tool phases/$v env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${new[@]}" \
        --tool racecheck $PY "$prog" ;;
      new-cluster0) timed_tool phases/$v env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${new[@]}" \
        --tool racecheck --racecheck-filter-cluster-id 0 $PY "$prog" ;;
      new-nobarrier) timed_tool phases/$v env PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
        NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING=0 "${new[@]}" \
        --tool racecheck $PY "$prog" ;;
      *) echo "unknown phase variant $v" >&2; continue ;;
    esac
  done
  # With a newer sanitizer: does block 0 alone still find a race the user's
  # kernel has in every block (tests/gpu/real/user_kernel_race.py)?
  if [ -n "${NEW_SANITIZER:-}" ]; then
    (cd "$ROOT/tests/gpu/real" && timeout 90 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$NEW_SANITIZER" \
      --tool racecheck --racecheck-filter-cluster-id 0 --print-limit 0 $PY user_kernel_race.py \
      >"$OUTDIR/user_race-cluster0.txt" 2>&1; echo "exit $?" >>"$OUTDIR/user_race-cluster0.txt")
  fi
  {
    printf '%-12s' variant
    for p in import-torch import-timm model-on-gpu forward backward optimizer-step second-step exit; do
      printf ' %9s' "${p:0:9}"
    done
    printf ' %8s %8s  %s\n' wall cpu-user summary
    for v in "${variants[@]}"; do
      local f=$OUTDIR/phases/$v
      printf '%-12s' "$v"
      for p in import-torch import-timm model-on-gpu forward backward optimizer-step second-step exit; do
        printf ' %9s' "$(awk -v p="$p" '$1 == "phase" && $2 == p {print $3}' "$f.err" | tail -1)"
      done
      printf ' %8s %8s  %s\n' "$(cat "$f.seconds")" "$(awk '{print $2}' "$f.cpu")" \
        "$(grep -h -E 'SUMMARY' "$f.out" "$f.err" | tr '\n' ' ')"
    done
  } | tee "$OUTDIR/racecheck-phases-summary.txt"
}

print_limit_costs() {
  mkdir -p "$OUTDIR/pl"
  local run=(env PYTORCH_NO_CUDA_MEMORY_CACHING=1 $PY "$BT_PROGRAM")
  local cs=(compute-sanitizer --error-exitcode 86 --target-processes all --print-limit 1000)
  timed pl/synccheck "$BT_TIMEOUT" "${cs[@]}" --tool synccheck \
    --xml --save "$OUTDIR/pl/synccheck.xml" "${run[@]}" &
  timed pl/initcheck "$BT_TIMEOUT" "${cs[@]}" --tool initcheck --show-backtrace device \
    --xml --save "$OUTDIR/pl/initcheck.xml" "${run[@]}" &
  timed pl/synccheck-exclude "$BT_TIMEOUT" "${cs[@]}" --tool synccheck \
    --kernel-name-exclude kns=flash_bprop \
    --xml --save "$OUTDIR/pl/synccheck-exclude.xml" "${run[@]}" &
  wait
  {
    printf '%-18s %8s %5s %9s  %s\n' variant seconds exit records summary
    for v in synccheck initcheck synccheck-exclude; do
      local f=$OUTDIR/pl/$v
      printf '%-18s %8s %5s %9s  %s\n' "$v" "$(cat "$f.seconds")" "$(cat "$f.exit")" \
        "$(grep -c '<record>' "$f.xml" 2>/dev/null)" \
        "$(grep -h -E 'SUMMARY' "$f.out" "$f.err" | tr '\n' ' ')"
      echo "  kernels:"
      xml_kernels "$f.xml" 5
    done
    gzip -f "$OUTDIR"/pl/*.xml
  } | tee "$OUTDIR/print-limit-summary.txt"
}

allocator_costs() {
  mkdir -p "$OUTDIR/alloc"
  timed alloc/plain 300 $PY "$MIX_PROGRAM"
  local tool caching
  for tool in racecheck synccheck; do
    for caching in off on; do
      local v=$tool-$caching run=($PY "$MIX_PROGRAM")
      [ "$caching" = off ] && run=(env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${run[@]}")
      local cs=(compute-sanitizer --tool "$tool" --error-exitcode 86 --target-processes all
        --print-limit 0)
      [ "$tool" = synccheck ] && cs+=(--destroy-on-device-error kernel)
      timed_tool alloc/$v "${cs[@]}" --xml --save "$OUTDIR/alloc/$v.xml" "${run[@]}"
    done
  done
  {
    printf '%-15s %8s %5s %9s %9s %8s  %s\n' variant seconds exit cpu-user cpu-sys gpu-busy summary
    printf '%-15s %8s\n' plain "$(cat "$OUTDIR/alloc/plain.seconds")"
    for v in racecheck-off racecheck-on synccheck-off synccheck-on; do
      tool_row 15 "$v" "$OUTDIR/alloc/$v"
      echo "  kernels with records:"
      xml_kernels "$OUTDIR/alloc/$v.xml" 8
    done
    gzip -f "$OUTDIR"/alloc/*.xml
  } | tee "$OUTDIR/allocator-summary.txt"
}

ncu_alone() {
  mkdir -p "$OUTDIR/mix"
  timeout 300 $PY "$MIX_PROGRAM" >/dev/null 2>&1 </dev/null
  timed mix/ncu-j1 400 "$CW" --color never run -j 1 --stages plain,ncu \
    --out-dir "$OUTDIR/mix/ncu-j1" --format json -- $PY "$MIX_PROGRAM"
  local base=("${LEAN[@]}" --metrics "$METRICS")
  timed mix/ncu-stacks 300 "${base[@]}" --call-stack --call-stack-type python \
    -o /tmp/mix-ncu-stacks $PY "$MIX_PROGRAM"
  timed mix/ncu-bare 300 "${base[@]}" -o /tmp/mix-ncu-bare $PY "$MIX_PROGRAM"
  {
    for v in ncu-j1 ncu-stacks ncu-bare; do
      printf '%-10s %8s s, exit %s, %s launches profiled\n' "$v" "$(cat "$OUTDIR/mix/$v.seconds")" \
        "$(cat "$OUTDIR/mix/$v.exit")" \
        "$(cat "$OUTDIR/mix/$v.out" "$OUTDIR/mix/$v.err" "$OUTDIR/mix/$v"/ncu/stdout 2>/dev/null |
          grep -c '==PROF== Profiling')"
    done
    echo "ncu-j1 stages: $(stage_times "$OUTDIR/mix/ncu-j1/report.json")"
  } | tee "$OUTDIR/ncu-alone-summary.txt"
}

# ncu_wrapper NAME EXTRA...: an ncu that adds EXTRA to a profiling run (not
# to the imports), or with EXTRA "--metrics=X" replaces the metrics.
ncu_wrapper() {
  local name=$1
  shift
  local w=$OUTDIR/contention/ncu-$name
  {
    echo '#!/usr/bin/env bash'
    echo 'args=("$@")'
    echo 'case " $* " in *" --import "*) exec ncu "$@" ;; esac'
    printf 'extra=('; [ $# -gt 0 ] && printf '%q ' "$@"; echo ')'
    echo 'metrics=""; for e in "${extra[@]}"; do case $e in --metrics=*) metrics=${e#--metrics=} ;; esac; done'
    echo 'if [ -n "$metrics" ]; then for i in "${!args[@]}"; do [ "${args[$i]}" = --metrics ] && args[$((i+1))]=$metrics; done; exec ncu "${args[@]}"; fi'
    echo 'exec ncu "${extra[@]}" "${args[@]}"'
  } >"$w"
  chmod +x "$w"
  echo "$w"
}

ncu_contention() {
  mkdir -p "$OUTDIR/contention"
  timeout 300 $PY "$MIX_PROGRAM" >/dev/null 2>&1 </dev/null
  local sass="smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"
  local v w variants
  read -ra variants <<<"${CONTENTION_VARIANTS:-stage no-flush sass-only}"
  for v in "${variants[@]}"; do
    case $v in
      stage) w=$(ncu_wrapper stage) ;;
      no-flush) w=$(ncu_wrapper no-flush --cache-control none) ;;
      sass-only) w=$(ncu_wrapper sass-only "--metrics=$sass") ;;
      # vendor matrix kernels left out, as ncu-levers measures alone
      no-vendor) w=$(ncu_wrapper no-vendor -k "$NOLIB") ;;
      *) echo "unknown contention variant $v" >&2; continue ;;
    esac
    timed "contention/$v" 400 "$CW" --color never run --ncu "$w" \
      --stages plain,racecheck,initcheck,ncu --out-dir "$OUTDIR/contention/$v" \
      --format json -- $PY "$MIX_PROGRAM"
  done
  {
    for v in "${variants[@]}"; do
      printf '%-10s %6s s, exit %s, passes/launch %s: ' "$v" "$(cat "$OUTDIR/contention/$v.seconds")" \
        "$(cat "$OUTDIR/contention/$v.exit")" \
        "$(grep -o '[0-9]* passes' "$OUTDIR/contention/$v/ncu/stdout" 2>/dev/null |
          awk '{ s += $1; n++ } END { if (n) printf "%.1f x %d", s / n, n; else print "-" }')"
      stage_times "$OUTDIR/contention/$v/report.json"
    done
  } | tee "$OUTDIR/contention-summary.txt"
}

# mix_run NAME STAGES: `cudawatch run` of MIX_PROGRAM with those stages
# (all when empty), its report in $OUTDIR/mix/NAME.
mix_run() {
  local name=$1 stages=$2 extra=()
  [ -n "$stages" ] && extra=(--stages "$stages")
  timed "mix/$name" 400 "$CW" --color never run --out-dir "$OUTDIR/mix/$name" \
    "${extra[@]}" --format json -- $PY "$MIX_PROGRAM"
}

mix_costs() {
  mkdir -p "$OUTDIR/mix"
  timeout 300 $PY "$MIX_PROGRAM" >/dev/null 2>&1 </dev/null
  timed mix/plain 300 $PY "$MIX_PROGRAM"
  local smi
  smi=$(gpu_busy "$OUTDIR/mix/all.busy")
  mix_run all ""
  kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
  mix_run ncu plain,ncu
  mix_run long plain,racecheck,initcheck,ncu
  mix_run short plain,memcheck,synccheck,csan,memory
  {
    printf '%-6s %8s %5s  %s\n' run seconds exit stages
    printf '%-6s %8s\n' plain "$(cat "$OUTDIR/mix/plain.seconds")"
    for v in all ncu long short; do
      printf '%-6s %8s %5s  %s\n' "$v" "$(cat "$OUTDIR/mix/$v.seconds")" "$(cat "$OUTDIR/mix/$v.exit")" \
        "$(stage_times "$OUTDIR/mix/$v/report.json")"
    done
    echo "GPU busy during the full check (mean, share of samples at 100%):"
    awk '{s+=$1; n++; if ($1>=99) f++} END {if (n) printf "%.0f%% mean, %.0f%% of %d samples at 99-100%%\n", s/n, 100*f/n, n}' "$OUTDIR/mix/all.busy"
  } | tee "$OUTDIR/mix-summary.txt"
}

# count_launches PROGRAM: kernel launches of PROGRAM (caching allocator
# off, as the sanitizer stages run it), from torch's profiler.
count_launches() {
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 $PY -c '
import runpy, sys
from torch.profiler import profile, ProfilerActivity
from torch.autograd import DeviceType
sys.argv = [sys.argv[1]]
with profile(activities=[ProfilerActivity.CUDA]) as p:
    runpy.run_path(sys.argv[0], run_name="__main__")
names = [e.name for e in p.events() if e.device_type == DeviceType.CUDA]
print(sum(1 for n in names if not n.startswith(("Memcpy", "Memset"))))
' "$1" 2>"$OUTDIR/count-launches.err" | tail -1
}

# race_ranges DIR PROGRAM RANGE...: racecheck as the stage runs it on
# PROGRAM, once per RANGE ("skip:count", count empty for open-ended), all
# at once; each range's files in DIR/rSKIP-COUNT ("end" when open-ended).
race_ranges() {
  local d=$1 program=$2
  shift 2
  mkdir -p "$d"
  local cs=(compute-sanitizer --tool racecheck --error-exitcode 86 --target-processes all
    --print-limit 0 --destroy-on-device-error kernel)
  local r skip count pids=() extra
  for r in "$@"; do
    skip=${r%%:*}; count=${r#*:}
    extra=(--launch-skip "$skip")
    [ -n "$count" ] && extra+=(--launch-count "$count")
    timed_tool "${d#$OUTDIR/}/r$skip-${count:-end}" "${cs[@]}" "${extra[@]}" \
      --xml --save "$d/r$skip-${count:-end}.xml" \
      env PYTORCH_NO_CUDA_MEMORY_CACHING=1 $PY "$program" &
    pids+=($!)
  done
  wait "${pids[@]}"
  local f
  for r in "$@"; do
    count=${r#*:}
    f=$d/r${r%%:*}-${count:-end}
    tool_row 9 "r$r" "$f"
    grep -q "didn't terminate successfully" "$f.out" 2>/dev/null &&
      echo "            CRASHED: $(grep -h -m1 'Internal Sanitizer Error' "$f.out" | cut -c1-100)"
    # whose the hazards are: the functions of each record's two accesses
    grep -o '<func>[^<]*</func>' "$f.xml" 2>/dev/null | sed 's/<[/]*func>//g' | cut -c1-90 |
      sort | uniq -c | sort -rn | head -4 | sed 's/^/            /'
  done
  rm -f "$d"/*.xml
}

racecheck_ranges() {
  local d=$OUTDIR/ranges
  mkdir -p "$d"
  timeout 300 $PY "$RACE_PROGRAM" >/dev/null 2>&1 </dev/null
  local n q
  n=$(count_launches "$BT_PROGRAM")
  n=${n:-1000}
  q=$(((n + 3) / 4))
  {
    echo "ViT-tiny: $n launches"
    race_ranges "$d/resnet" "$RACE_PROGRAM" 0: 0:64 64:64 128:64 192: 100000: &
    local a=$!
    race_ranges "$d/vit-whole" "$BT_PROGRAM" 0: &
    local b=$!
    race_ranges "$d/vit" "$BT_PROGRAM" 0:$q $q:$q $((2 * q)):$q $((3 * q)):
    wait $a $b
    timed ranges/ncu-race 400 "$CW" --color never run --stages plain,racecheck,ncu \
      --out-dir "$d/ncu-race" --format json -- $PY "$RACE_PROGRAM"
    printf 'ncu beside racecheck: %s s, exit %s: ' "$(cat "$d/ncu-race.seconds")" "$(cat "$d/ncu-race.exit")"
    stage_times "$d/ncu-race/report.json"
  } 2>&1 | tee "$OUTDIR/racecheck-ranges-summary.txt"
}

# mps_costs: the long stages with and without a private MPS daemon. The
# daemon's pipe and log directories are this run's own, so only the
# processes started here with CUDA_MPS_PIPE_DIRECTORY set connect to it;
# it is told to quit at the end.
mps_costs() {
  local d=$OUTDIR/mps
  mkdir -p "$d"
  local pipe=$d/pipe log=$d/log
  mkdir -p "$pipe" "$log"
  timeout 300 $PY "$MIX_PROGRAM" >/dev/null 2>&1 </dev/null
  timed mps/plain 300 $PY "$MIX_PROGRAM"
  timed mps/solo-race-ncu 400 "$CW" --color never run --stages plain,racecheck,ncu \
    --out-dir "$d/solo-race-ncu" --format json -- $PY "$MIX_PROGRAM"
  timed mps/solo-all 400 "$CW" --color never run \
    --out-dir "$d/solo-all" --format json -- $PY "$MIX_PROGRAM"
  {
    echo "daemon: $(command -v nvidia-cuda-mps-control || echo 'nvidia-cuda-mps-control not found')"
    nvidia-smi --query-gpu=compute_mode --format=csv,noheader
    CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$log nvidia-cuda-mps-control -d
    echo "daemon start: exit $?"
    export CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$log
    local tiny='import torch; x = torch.ones(1 << 20, device="cuda"); print(float((x * 2).sum()))'
    timed mps/tiny-plain 120 $PY -c "$tiny"
    timed mps/tiny-memcheck 120 compute-sanitizer --tool memcheck $PY -c "$tiny"
    timed mps/tiny-racecheck 120 compute-sanitizer --tool racecheck $PY -c "$tiny"
    timed mps/tiny-ncu 120 ncu --metrics gpu__time_duration.sum $PY -c "$tiny"
    local t
    for t in tiny-plain tiny-memcheck tiny-racecheck tiny-ncu; do
      printf '%-15s %6s s, exit %s: %s\n' "$t" "$(cat "$d/$t.seconds")" "$(cat "$d/$t.exit")" \
        "$(cat "$d/$t.out" "$d/$t.err" | grep -v '^ *$' | tail -3 | tr '\n' '|' | cut -c1-300)"
    done
    echo "servers: $(echo get_server_list | nvidia-cuda-mps-control 2>&1 | tr '\n' ' ')"
    local smi
    (sleep 20; nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv >"$d/apps.txt" 2>&1;
      nvidia-smi >"$d/smi.txt" 2>&1) &
    smi=$!
    timed mps/mps-race-ncu 400 "$CW" --color never run --stages plain,racecheck,ncu \
      --out-dir "$d/mps-race-ncu" --format json -- $PY "$MIX_PROGRAM"
    wait $smi
    timed mps/mps-all 400 "$CW" --color never run \
      --out-dir "$d/mps-all" --format json -- $PY "$MIX_PROGRAM"
    echo quit | nvidia-cuda-mps-control
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    echo "plain: $(cat "$d/plain.seconds") s"
    local v
    for v in solo-race-ncu mps-race-ncu solo-all mps-all; do
      printf '%-14s %6s s, exit %s: %s\n' "$v" "$(cat "$d/$v.seconds")" "$(cat "$d/$v.exit")" \
        "$(stage_times "$d/$v/report.json")"
    done
    echo "processes 20 s into the MPS run (type M+C: an MPS client):"
    grep -E 'M\+C|  C  |MPS' "$d/smi.txt" | head -12
    tail -5 "$log"/control.log 2>/dev/null
  } 2>&1 | tee "$OUTDIR/mps-summary.txt"
}

# shard_wrapper K: an ncu that runs a profiling run as K ncu processes at
# once, each profiling the kernels whose function name's length is k
# modulo K (`--kernel-name regex:^(.{K})*.{k}$`: disjoint, together every
# kernel, each name's launch configurations all in one shard), and logs
# each shard's seconds and launches profiled. The stage gets shard 0's
# profile only: this measures time, not the report.
shard_wrapper() {
  local k=$1 w=$OUTDIR/shards/ncu-shard$1
  mkdir -p "$OUTDIR/shards"
  cat >"$w" <<WRAP
#!/usr/bin/env bash
case " \$* " in *" --import "*) exec ncu "\$@" ;; esac
K=$k
log=$OUTDIR/shards/shard\$K.log
args=("\$@"); out=""
for i in "\${!args[@]}"; do [ "\${args[\$i]}" = -o ] && out=\${args[\$((i+1))]}; done
[ -n "\$out" ] || exec ncu "\$@"
pids=()
for ((s = 0; s < K; s++)); do
  sargs=("\${args[@]}")
  for i in "\${!sargs[@]}"; do [ "\${sargs[\$i]}" = -o ] && sargs[\$((i+1))]=\$out.shard\$s; done
  ( start=\$(date +%s.%N)
    ncu --kernel-name "regex:^(.{\$K})*.{\$s}\\\$" "\${sargs[@]}" >"\$out.shard\$s.stdout" 2>&1
    rc=\$?; end=\$(date +%s.%N)
    echo "shard \$s/\$K: \$(awk -v a=\$start -v b=\$end 'BEGIN { printf "%.1f", b - a }') s, exit \$rc, \$(grep -c '==PROF== Profiling' "\$out.shard\$s.stdout") launches" >>"\$log" ) &
  pids+=(\$!)
done
for p in "\${pids[@]}"; do wait \$p; done
cat "\$out.shard0.stdout"
cp "\$out.shard0.ncu-rep" "\$out.ncu-rep" 2>/dev/null || cp "\$out.shard0.ncu-rep" "\$out" 2>/dev/null
exit 0
WRAP
  chmod +x "$w"
  echo "$w"
}

ncu_shards() {
  mkdir -p "$OUTDIR/shards"
  timeout 300 $PY "$MIX_PROGRAM" >/dev/null 2>&1 </dev/null
  timed shards/plain 300 $PY "$MIX_PROGRAM"
  local k
  for k in ${SHARDS:-1 2 3}; do
    timed "shards/k$k" 400 "$CW" --color never run --ncu "$(shard_wrapper "$k")" \
      --out-dir "$OUTDIR/shards/k$k" --format json -- $PY "$MIX_PROGRAM"
  done
  {
    echo "plain: $(cat "$OUTDIR/shards/plain.seconds") s"
    for k in ${SHARDS:-1 2 3}; do
      printf 'K=%s %6s s, exit %s: %s\n' "$k" "$(cat "$OUTDIR/shards/k$k.seconds")" \
        "$(cat "$OUTDIR/shards/k$k.exit")" "$(stage_times "$OUTDIR/shards/k$k/report.json")"
      sed 's/^/    /' "$OUTDIR/shards/shard$k.log" 2>/dev/null
    done
  } | tee "$OUTDIR/shards-summary.txt"
}

# framework-filter: ViT-tiny's step (FILTER_PROGRAM: another) ALONE, one
# variant after another, under NEW_SANITIZER (2026.4): racecheck with the
# stage's library filter, then with PyTorch's kernels left out too (the
# stage's filter since 2026-11-29, tools::sanitizer::launches), then that
# with --dump-kernel-launches (which launches stayed checked); initcheck
# as a Python program's stage runs it, with and without
# --check-tensor-ops yes (does 2026.4 see the Hopper GEMMs' stores?).
framework_filter() {
  mkdir -p "$OUTDIR/filter"
  local prog=${FILTER_PROGRAM:-$ROOT/tests/gpu/real/vit_tiny_step.py}
  local cs=("${NEW_SANITIZER:?framework-filter needs NEW_SANITIZER}" --print-limit 0
    --error-exitcode 86 --target-processes all --destroy-on-device-error kernel)
  local libs='(cudnn|cublas|cutlass|xmma|nvjet|fmha|splitKreduce|gemv2T_kernel|gemv2N_kernel|gemvNSP|gemmSN_|gemmk1_|cufft|nccl|(ampere|volta|turing|sm80|sm90|sm100)_[a-z0-9]*gemm)'
  local both="${libs%)}|implicit_convolve_sgemm|^_ZN2at6native|^_ZN2at4cuda|^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_)"
  export PYTORCH_NO_CUDA_MEMORY_CACHING=1
  timed filter/plain 300 "$PY" "$prog"
  timed_tool filter/racecheck-libraries "${cs[@]}" --tool racecheck --kernel-name-exclude "regex=$libs" "$PY" "$prog"
  timed_tool filter/racecheck-with-pytorch "${cs[@]}" --tool racecheck --kernel-name-exclude "regex=$both" "$PY" "$prog"
  timed_tool filter/racecheck-launches "${cs[@]}" --tool racecheck --kernel-name-exclude "regex=$both" \
    --dump-kernel-launches --show-backtrace no "$PY" "$prog"
  timed_tool filter/initcheck "${cs[@]}" --tool initcheck --show-backtrace no "$PY" "$prog"
  timed_tool filter/initcheck-tensor-ops "${cs[@]}" --tool initcheck --show-backtrace no \
    --check-tensor-ops yes "$PY" "$prog"
  unset PYTORCH_NO_CUDA_MEMORY_CACHING
  {
    echo "plain: $(cat "$OUTDIR/filter/plain.seconds") s"
    for v in racecheck-libraries racecheck-with-pytorch initcheck initcheck-tensor-ops; do
      tool_row 24 "$v" "$OUTDIR/filter/$v"
    done
    echo "launches left out by name: $(grep -c 'excluded by name' "$OUTDIR/filter/racecheck-launches.out")," \
      "checked: $(grep -c '^========= Launch #[0-9]* *$' "$OUTDIR/filter/racecheck-launches.out")"
  } | tee "$OUTDIR/framework-filter-summary.txt"
}

phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(ncu floods)
for p in "${phases[@]}"; do
  case $p in
    ncu) ncu_costs ;;
    ncu-levers) ncu_levers ;;
    ncu-tail) ncu_tail ;;
    ncu-sass) ncu_sass ;;
    ncu-bytes) ncu_bytes ;;
    ncu-stacks) ncu_stacks ;;
    ncu-per-kernel) ncu_per_kernel ;;
    backtraces) backtrace_costs ;;
    floods) flood_costs ;;
    racecheck-levers) racecheck_levers ;;
    print-limit) print_limit_costs ;;
    allocator) allocator_costs ;;
    ncu-alone) ncu_alone ;;
    ncu-contention) ncu_contention ;;
    mix) mix_costs ;;
    racecheck-ranges) racecheck_ranges ;;
    mps) mps_costs ;;
    ncu-shards) ncu_shards ;;
    racecheck-phases) racecheck_phases ;;
    framework-filter) framework_filter ;;
    *) echo "unknown phase $p" >&2; exit 2 ;;
  esac
done
