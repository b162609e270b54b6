#!/usr/bin/env bash
# Issue 60's check of the global-race stage on the GPU machine, in one
# call, as a user meets it:
#   1. the stage's first use: `cudawatch run --stages plain,global-race`
#      builds the tool from the sources it carries (timed, into OUT/cache);
#   2. every program of tests/gpu/global_race/ under that command: each
#      planted race must be FINDINGS at its lines, each twin CLEAN;
#   3. the tool's own output on each (scripts/capture-global-race.sh,
#      RUNS=global-race, the library built in 1), for sample-reports/;
#   4. real models (MODELS) under `--stages plain,racecheck,global-race
#      -j 1`: no gating global-race finding, and the stage's seconds beside
#      racecheck's and the plain run's.
# Prints a table per part; everything kept under OUT.
#
# Usage: scripts/gpu-global-race.sh OUT   (needs target/release/cudawatch)
#   MODELS         real programs for part 4 (default: ResNet-18's and
#                  ViT-tiny's steps; empty: skip it)
#   STAGE_TIMEOUT  per stage, seconds (default 300)
set -uo pipefail
OUT=$(mkdir -p "${1:?usage: gpu-global-race.sh OUT}" && cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
SRC=$ROOT/tests/gpu/global_race
export PATH=$PATH:/usr/local/cuda/bin
export CUDAWATCH_CACHE_DIR=$OUT/cache
MODELS=${MODELS-tests/gpu/real/resnet_step.py tests/gpu/real/vit_tiny_step.py}
races=" counter_block counter_grid waw_blocks read_other_block histogram grid_stride_overlap reduction neighbour_no_barrier "

build=$OUT/programs
mkdir -p "$build"
for f in "$SRC"/*.cu; do
  c=$(basename "$f" .cu)
  nvcc -lineinfo -arch=sm_90 -o "$build/$c" "$f" 2>"$build/$c.nvcc.txt" &
done
wait

# The verdict line of a run's stderr, and its exit code.
verdict() { grep -E '^(CLEAN|PASSED|FINDINGS|INCONCLUSIVE)' "$1" | tail -n 1 | cut -c 1-150; }
# A stage's seconds in a report.json.
seconds() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join("%s=%.1f" % (s["tool"], s.get("seconds") or 0) for s in r["stages"] if s.get("outcome") != "skipped"))' "$1" 2>/dev/null
}

echo "== 1-2. the corpus under cudawatch run --stages plain,global-race"
echo "| program | expected | exit | verdict | seconds |"
echo "| --- | --- | --- | --- | --- |"
for f in "$SRC"/*.cu; do
  c=$(basename "$f" .cu)
  expected=clean; [[ "$races" == *" $c "* ]] && expected=findings
  dir=$OUT/runs/$c
  mkdir -p "$(dirname "$dir")"
  start=$(date +%s.%N)
  (cd "$SRC" && timeout -k 10 600 "$CW" --color never run --out-dir "$dir" \
    --timeout "${STAGE_TIMEOUT:-300}" --stages plain,global-race -- "$build/$c" \
    >"$OUT/runs/$c.stdout" 2>"$OUT/runs/$c.stderr")
  code=$?
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "| $c | $expected | $code | $(verdict "$OUT/runs/$c.stderr") | $took |"
done
lib=$(ls "$OUT"/cache/global-race/*/libglobal-race.so 2>/dev/null | head -n 1)
echo "built: ${lib:-nothing}; the build's output: $(ls "$OUT"/cache/global-race/*.log 2>/dev/null | head -n 1)"

if [ -n "$lib" ]; then
  echo "== 3. the tool's own output (scripts/capture-global-race.sh, RUNS=global-race)"
  CUDAWATCH_GLOBAL_RACE_LIB=$lib RUNS=global-race "$ROOT/scripts/capture-global-race.sh" "$OUT/captures" \
    >"$OUT/captures.log" 2>&1
  for f in "$OUT"/captures/*/global-race.stdout; do
    c=$(basename "$(dirname "$f")")
    lines=$OUT/captures/$c/global-race/global-race.jsonl
    echo "$c: $(grep -o '"kind": "[a-z-]*"' "$lines" 2>/dev/null | wc -l) races; flags $(grep -o '"flags_seen": [0-9]*' "$lines" 2>/dev/null | sort -u | tr '\n' ' ')"
  done
fi

[ -z "$MODELS" ] && exit 0
echo "== 4. real models under --stages plain,racecheck,global-race -j 1"
echo "| program | exit | verdict | stages (s) |"
echo "| --- | --- | --- | --- |"
for m in $MODELS; do
  name=$(basename "$m" .py)
  dir=$OUT/models/$name
  mkdir -p "$OUT/models"
  (cd "$ROOT/$(dirname "$m")" && timeout -k 10 900 "$CW" --color never run --out-dir "$dir" \
    --timeout "${STAGE_TIMEOUT:-300}" -j 1 --stages plain,racecheck,global-race \
    -- python3 "$(basename "$m")" >"$OUT/models/$name.stdout" 2>"$OUT/models/$name.stderr")
  code=$?
  echo "| $name | $code | $(verdict "$OUT/models/$name.stderr") | $(seconds "$dir/report.json") |"
done
