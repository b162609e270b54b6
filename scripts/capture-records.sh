#!/usr/bin/env bash
# Captures of every record kind compute-sanitizer's manual lists that one
# GPU can produce (tests/gpu/records/records.cu, one fault per case; issue
# 59), on the GPU machine, into sample-reports/records/CASE/:
#   user.out     the tool a user would type for the case, text output, as
#                typed (`compute-sanitizer [--tool T] [flags] ./records CASE`)
#   plain.out    the program alone: its own error line and exit
#   run/         `cudawatch run --stages plain,coredump,memcheck,racecheck,
#                initcheck,synccheck` of it: each tool's XML as the stages
#                run them (dumps and the hook left out)
#   report.json  that run's report
# Each file ends with the exit status.
#
# Usage: scripts/capture-records.sh OUTDIR [CASE...]   (needs target/release/cudawatch)
#   PARALLEL: cases checked at once (4)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: capture-records.sh OUTDIR [CASE...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
export PATH=$PATH:/usr/local/cuda/bin
cases=("$@")
# CASE=the tool and flags a user would type for it.
declare -A user=(
  [misaligned_pc]="" [out_of_range_pc]="" [trap]="" [breakpoint]="" [local_atomic]=""
  [shared_past_end]="" [local_past_end]="" [null_read]="" [double_free]="" [free_invalid]=""
  [heap_leak]="--leak-check full" [syncwarp_mask]="--tool synccheck"
  [cluster_divergent]="--tool synccheck" [shared_hazards]="--tool racecheck --racecheck-report all"
  [unused_memory]="--tool initcheck --track-unused-memory"
)
[ ${#cases[@]} -eq 0 ] && cases=("${!user[@]}")
work=$(mktemp -d)
nvcc -lineinfo -arch=sm_90 -o "$work/records" "$ROOT/tests/gpu/records/records.cu" \
  >"$OUTDIR/nvcc.txt" 2>&1 || { echo "records.cu did not build: $OUTDIR/nvcc.txt" >&2; exit 1; }

# one CASE: its three captures.
one() {
  local c=$1 dir=$OUTDIR/$1
  mkdir -p "$dir"
  (cd "$work" && timeout 120 ./records "$c") >"$dir/plain.out" 2>&1 </dev/null
  echo "exit $?" >>"$dir/plain.out"
  # shellcheck disable=SC2086
  (cd "$work" && timeout 120 compute-sanitizer ${user[$c]} ./records "$c") >"$dir/user.out" 2>&1 </dev/null
  echo "exit $?" >>"$dir/user.out"
  (cd "$work" && timeout 300 "$CW" --color never run \
    --stages plain,coredump,memcheck,racecheck,initcheck,synccheck \
    --out-dir "$work/runs/$c" --format json -- ./records "$c" \
    >"$dir/report.json" 2>"$dir/report.txt" </dev/null)
  echo "exit $?" >>"$dir/report.txt"
  rm -rf "$work/runs/$c/hook" "$work"/runs/"$c"/coredump/*.nvcudmp
  mv "$work/runs/$c" "$dir/run"
}

running=0
for c in "${cases[@]}"; do
  one "$c" &
  running=$((running + 1))
  if [ "$running" -ge "${PARALLEL:-4}" ]; then wait -n; running=$((running - 1)); fi
done
wait
. "$ROOT/scripts/lib/record.sh"
environment
