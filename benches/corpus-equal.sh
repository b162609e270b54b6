#!/usr/bin/env bash
# Issue 23's check that running the tool stages at once changes nothing
# but the time: the real corpus (or the CASEs given) under `cudawatch run`
# with default settings and with `-j 1` (one stage at a time), both sets
# at once on the GPU machine, then each program's two reports compared by
# scripts/compare-reports.py (stage outcomes, site ids and counts, the
# coalescing kernels).
#
# Usage: benches/corpus-equal.sh OUTDIR [CASE...]   (needs target/release/cudawatch)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: corpus-equal.sh OUTDIR [CASE...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/scripts/gpu-real.sh" "$OUTDIR/default" "$@" >"$OUTDIR/default.log" 2>&1 &
RUN_FLAGS="-j 1" "$ROOT/scripts/gpu-real.sh" "$OUTDIR/sequential" "$@" >"$OUTDIR/sequential.log" 2>&1 &
wait
status=0
for run in "$OUTDIR"/default/runs/*/; do
  c=$(basename "$run")
  if line=$(python3 "$ROOT/scripts/compare-reports.py" "$run" "$OUTDIR/sequential/runs/$c"); then
    echo "$c: $line"
  else
    echo "$c: DIFFERS: $line"
    status=1
  fi
done | tee "$OUTDIR/compare.txt"
grep -q DIFFERS "$OUTDIR/compare.txt" && status=1
exit $status
