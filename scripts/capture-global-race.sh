#!/usr/bin/env bash
# Today's baseline on races in global memory (tests/gpu/global_race/, issue
# 60), on the GPU machine: each planted race and its race-free twin under
# raw compute-sanitizer as a user types it (racecheck and memcheck, text),
# then `cudawatch run` with its default stages; and, when the tool is
# built (native/global-race/build.sh, or CUDAWATCH_GLOBAL_RACE_LIB names
# it), each program under it: its lines
# (global-race.jsonl) and each module's SASS with line information
# (`nvdisasm -g`, for the offsets its races name). Into
# sample-reports/global_race/.
#
# Usage: scripts/capture-global-race.sh OUTDIR [CASE...]   (needs target/release/cudawatch)
#   RUNS: which runs of each case ("plain racecheck memcheck cudawatch
#   global-race", the default: all), e.g. RUNS=global-race for the tool alone.
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: capture-global-race.sh OUTDIR [CASE...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/tests/gpu/global_race
CW=$ROOT/target/release/cudawatch
export PATH=$PATH:/usr/local/cuda/bin
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  for f in "$SRC"/*.cu; do cases+=("$(basename "$f" .cu)"); done
fi

# Built as users build theirs for an H100, with line information, all at once.
build=$(mktemp -d)
for c in "${cases[@]}"; do
  nvcc -lineinfo -arch=sm_90 -o "$build/$c" "$SRC/$c.cu" 2>"$OUTDIR/$c.nvcc.txt" &
done
wait

RUN_TIMEOUT=300
. "$ROOT/scripts/lib/record.sh"

RUNS=" ${RUNS:-plain racecheck memcheck cudawatch global-race} "
wanted() { [[ "$RUNS" == *" $1 "* ]]; }
for c in "${cases[@]}"; do
  [ -x "$build/$c" ] || { echo "$c: did not build (see $c.nvcc.txt)" >&2; continue; }
  wanted plain && record plain "$c" -- "$build/$c"
  wanted racecheck && record racecheck "$c" -- compute-sanitizer --tool racecheck "$build/$c"
  wanted memcheck && record memcheck "$c" -- compute-sanitizer "$build/$c"
  # cudawatch's default check, its run folder kept.
  wanted cudawatch &&
    record cudawatch "$c" -- "$CW" --color never run --out-dir "$OUTDIR/$c/run" -- "$build/$c"
  tool=${CUDAWATCH_GLOBAL_RACE_LIB:-$ROOT/target/global-race/libglobal-race.so}
  if wanted global-race && [ -f "$tool" ]; then
    record global-race "$c" -- env LD_PRELOAD="$tool" \
      CUDAWATCH_GLOBAL_RACE_OUT="$OUTDIR/$c/global-race" "$build/$c"
    for cubin in "$OUTDIR/$c"/global-race/modules/*.cubin; do
      [ -f "$cubin" ] && nvdisasm -g -c "$cubin" >"${cubin%.cubin}.sass" 2>&1
      rm -f "$cubin"
    done
  fi
done
environment
