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
#   (needs target/release/cudawatch; default programs: the small steps,
#    ResNet-18 and ViT-tiny of tests/gpu/real and tests/gpu)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: full-check.sh OUTDIR [PROGRAM.py ...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
export PATH=$PATH:/usr/local/cuda/bin
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(
  "$ROOT/tests/gpu/torch_train_clean.py"
  "$ROOT/tests/gpu/real/dataloader_amp_step.py"
  "$ROOT/tests/gpu/real/resnet_step.py"
  "$ROOT/tests/gpu/real/vit_tiny_step.py"
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
for p in "${programs[@]}"; do
  name=$(basename "$p" .py)
  # Import caches (torch, timm, cuDNN's kernels) warm for both runs alike.
  timeout 300 python3 "$p" >/dev/null 2>&1 </dev/null
  plain=$(seconds_of "$OUTDIR/$name.plain.txt" /dev/null timeout 300 python3 "$p")
  full=$(seconds_of "$OUTDIR/$name.json" "$OUTDIR/$name.txt" \
    timeout "${CHECK_LIMIT:-500}" "$CW" --color never run --out-dir "$OUTDIR/runs/$name" --format json -- python3 "$p")
  python3 - "$name" "$plain" "$full" "$OUTDIR/runs/$name" >>"$summary" <<'PY'
import json, sys
name, plain, full, run = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
report = json.load(open(f"{run}/report.json"))
record = json.load(open(f"{run}/run.json"))
stages = " ".join(f"{s['tool']}={s.get('seconds', 0):.0f}" for s in report["stages"])
conclusive = all(s["outcome"] in ("clean", "findings", "skipped") for s in report["stages"])
odd = [f"{s['tool']}:{s['outcome']}" for s in report["stages"]
       if s["outcome"] not in ("clean", "findings", "skipped")]
# What the whole run took beyond its plain run and its longest tool stage:
# the imports after a stage (ncu's CSV pages), reading and judging.
seconds = {s["tool"]: s.get("seconds") or 0 for s in report["stages"]}
longest = max([v for k, v in seconds.items() if k != "plain"] or [0])
beyond = full - seconds.get("plain", 0) - longest
print(f"| {name} | {plain:.1f} s | {full:.1f} s | {full / plain:.1f}x | {stages} | "
      f"{beyond:.0f} s | {'yes' if conclusive else 'NO: ' + ', '.join(odd)} | "
      f"{record.get('schedule', '-')} |")
PY
  if [ "${SEQUENTIAL:-0}" = 1 ]; then
    seq=$(seconds_of /dev/null /dev/null "$CW" --color never run -j 1 \
      --out-dir "$OUTDIR/runs/$name-seq" --format json -- python3 "$p")
    echo "  $name -j 1: $seq s; $(python3 "$ROOT/scripts/compare-reports.py" \
      "$OUTDIR/runs/$name-seq" "$OUTDIR/runs/$name")" >>"$summary"
  fi
done
{
  echo "| program | plain | full check | ratio | stages (s) | beyond the longest stage | all conclusive | schedule |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  cat "$summary"
} | tee "$OUTDIR/table.md"
