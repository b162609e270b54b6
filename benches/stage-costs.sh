#!/usr/bin/env bash
# Where a long stage spends its time, on the GPU machine, with the tools
# alone (no cudawatch): the numbers behind the stage defaults in
# docs/tool-surprises.md ("What a stage costs").
#
#   ncu     ncu's profiling run of NCU_PROGRAM as the stage runs it, then
#           without the SourceCounters section, then with call stacks
#           (native and Python): wall time and passes per kernel.
#   floods  initcheck on FLOOD_PROGRAM (ResNet-18's step: ~40k records in
#           cuDNN) as the stage runs it and with each lever on the record
#           cost: no host backtraces, 8 host frames, text only, a print
#           limit. The variants run AT ONCE on the one GPU (each alone
#           would not fit one call): compare them with each other, not
#           with a run alone. Prints seconds, records, XML size and the
#           tool's own ERROR SUMMARY, and times `cudawatch parse` of the
#           full XML when target/release/cudawatch is there.
#
# Usage: benches/stage-costs.sh OUTDIR [ncu] [floods]
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: stage-costs.sh OUTDIR [ncu] [floods]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH=$PATH:/usr/local/cuda/bin
PY=${PY:-python3}
NCU_PROGRAM=${NCU_PROGRAM:-$ROOT/tests/gpu/real/dataloader_amp_step.py}
FLOOD_PROGRAM=${FLOOD_PROGRAM:-$ROOT/tests/gpu/real/resnet_step.py}
FLOOD_TIMEOUT=${FLOOD_TIMEOUT:-300}
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

phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(ncu floods)
for p in "${phases[@]}"; do
  case $p in
    ncu) ncu_costs ;;
    floods) flood_costs ;;
    *) echo "unknown phase $p" >&2; exit 2 ;;
  esac
done
