#!/usr/bin/env bash
# The cost of a full check against the program's own run, on the GPU
# machine: each program run plainly (as its user runs it), then under
# `cudawatch run` with default settings, one program at a time. Prints per
# program the plain time, the full check's time and their ratio, each
# stage's time, how many stages ran at once, and whether every stage was
# conclusive. With SEQUENTIAL=1 each program is also checked with `-j 1`
# and the two reports are compared (scripts/compare-reports.py).
#
# Usage: benches/full-check.sh OUTDIR [PROGRAM.py ...]
#   CHECK_LIMIT: seconds a full check may take (500), so one call of the
#   GPU machine holds the run.
#   REPEAT: plain runs and full checks per program, alternating (1); the
#   table gives the median of each (the plain run alone varied from 9.7 s
#   to 13.0 s between runs of one program), their ratio, and the stages
#   of the median full check.
#   CW: the cudawatch binary (target/release/cudawatch)
#   RUN_FLAGS: more `cudawatch run` flags for the checks (e.g.
#   "--compute-sanitizer PATH", "--whole-program")
#   WARMUP=0: no warm-up run of each program first (warm the import
#   caches once yourself, e.g. every program at once for one step);
#   WARMUP=together: every program's warm-up run at once, before the
#   first is timed (how the outside scripts of 2026-11-29 were run: their
#   output in OUTDIR/NAME.warm.txt, a program that fails plainly is seen
#   there)
#   (needs target/release/cudawatch; default programs: issue 47's, below)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: full-check.sh OUTDIR [PROGRAM.py ...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=${CW:-$ROOT/target/release/cudawatch}
export PATH=$PATH:/usr/local/cuda/bin
programs=("$@")
# Issue 47's set: the DataLoader and JAX steps, ResNet-18, ViT-tiny, and a
# step that runs out of memory (on a two-GPU machine, ResNet-18 again sees
# both: the device line says which cards each table is from).
[ ${#programs[@]} -eq 0 ] && programs=(
  "$ROOT/tests/gpu/real/dataloader_amp_step.py"
  "$ROOT/tests/gpu/real/jax_step.py"
  "$ROOT/tests/gpu/real/resnet_step.py"
  "$ROOT/tests/gpu/real/vit_tiny_step.py"
  "$ROOT/tests/gpu/real/gpt2_oom_step.py"
)
# seconds_of OUTFILE ERRFILE CMD...: runs CMD with its output in the
# files, prints its wall time.
seconds_of() {
  local out=$1 err=$2 start end
  shift 2
  start=$(date +%s.%N)
  "$@" >"$out" 2>"$err" </dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }'
}
summary=$OUTDIR/summary.txt
: >"$summary"
# The table's head first, so that a call cut short by its limit still
# says which device its rows are from (rows follow as each program ends).
table=$OUTDIR/table.md
{
  # The device each figure is from: ratios of different cards do not compare.
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
    paste -sd ';' -), CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-all}"
  echo
  echo "flags: ${RUN_FLAGS:-(defaults)}"
  echo
  echo "| program | plain | full check | ratio | verdict | stages (s) | beyond the longest stage | all conclusive | schedule |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} >"$table"
if [ "${WARMUP:-1}" = together ]; then
  warming=()
  for p in "${programs[@]}"; do
    timeout 300 python3 "$p" >"$OUTDIR/$(basename "$p" .py).warm.txt" 2>&1 </dev/null &
    warming+=($!)
  done
  # Each by its PID: a pgrep loop would find itself.
  for pid in "${warming[@]}"; do wait "$pid"; done
fi
for p in "${programs[@]}"; do
  name=$(basename "$p" .py)
  # Import caches (torch, timm, cuDNN's kernels) warm for both runs alike.
  case "${WARMUP:-1}" in
    0 | together) ;;
    *) timeout 300 python3 "$p" >/dev/null 2>&1 </dev/null ;;
  esac
  plains=() fulls=()
  for k in $(seq 1 "${REPEAT:-1}"); do
    run=$name; [ "${REPEAT:-1}" -gt 1 ] && run=$name-$k
    plains+=("$(seconds_of "$OUTDIR/$run.plain.txt" /dev/null timeout 300 python3 "$p")")
    fulls+=("$run=$(seconds_of "$OUTDIR/$run.json" "$OUTDIR/$run.txt" \
      timeout "${CHECK_LIMIT:-500}" "$CW" --color never run --out-dir "$OUTDIR/runs/$run" \
      ${RUN_FLAGS:-} --format json -- python3 "$p")")
  done
  python3 - "$name" "$OUTDIR/runs" "${plains[*]}" "${fulls[*]}" >>"$summary" <<'PY'
import json, statistics, sys
name, runs, plains, fulls = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
plain = statistics.median(float(p) for p in plains)
checks = sorted((float(f.split("=")[1]), f.split("=")[0]) for f in fulls)
full, median_run = checks[(len(checks) - 1) // 2]
def stages_of(run):
    # The judged report cudawatch printed (the run directory's report.json
    # is the unjudged one: no stage is marked blocked by a finding there).
    try:
        return json.load(open(f"{runs}/../{run}.json"))["stages"]
    except (OSError, ValueError, KeyError):
        return json.load(open(f"{runs}/{run}/report.json"))["stages"]
report_stages = stages_of(median_run)
try:
    judged = json.load(open(f"{runs}/../{median_run}.json"))
    verdict = f"{judged['verdict'][-1]['label']} (exit {judged['exit_code']})"
except (OSError, ValueError, KeyError, IndexError):
    verdict = "no report"
record = json.load(open(f"{runs}/{median_run}/run.json"))
stages = " ".join(f"{s['tool']}={s.get('seconds', 0):.0f}" for s in report_stages)
odd = [f"{run}:{s['tool']}:{s['outcome']}" for _, run in checks for s in stages_of(run)
       if s["outcome"] not in ("clean", "findings", "skipped") and not s.get("blocked_by")]
# What the whole run took beyond its plain run and its longest tool stage:
# the imports after a stage (ncu's CSV pages), reading and judging.
seconds = {s["tool"]: s.get("seconds") or 0 for s in report_stages}
longest = max([v for k, v in seconds.items() if k != "plain"] or [0])
beyond = full - seconds.get("plain", 0) - longest
spread = "" if len(checks) == 1 else (
    f" (plain {min(map(float, plains)):.1f}-{max(map(float, plains)):.1f} s, "
    f"checks {checks[0][0]:.1f}-{checks[-1][0]:.1f} s, {len(checks)} each)")
print(f"| {name} | {plain:.1f} s | {full:.1f} s{spread} | {full / plain:.1f}x | {verdict} | {stages} | "
      f"{beyond:.0f} s | {'yes' if not odd else 'NO: ' + ', '.join(odd)} | "
      f"{record.get('schedule', '-')} |")
PY
  if [ "${SEQUENTIAL:-0}" = 1 ]; then
    seq=$(seconds_of /dev/null /dev/null "$CW" --color never run -j 1 \
      --out-dir "$OUTDIR/runs/$name-seq" --format json -- python3 "$p")
    echo "  $name -j 1: $seq s; $(python3 "$ROOT/scripts/compare-reports.py" \
      "$OUTDIR/runs/$name-seq" "$OUTDIR/runs/$run")" >>"$summary"
  fi
  tail -n +"$((${rows:-0} + 1))" "$summary" >>"$table"
  rows=$(wc -l <"$summary")
done
cat "$table"
