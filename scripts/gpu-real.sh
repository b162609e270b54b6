#!/usr/bin/env bash
# The real-workload corpus on the GPU machine: `cudawatch run` on every
# program of tests/gpu/real/ (correct programs built from library code, and
# the same kinds of program with a bug in the user's part), keeping each
# terminal report, JSON report and run directory. A folder pytest_NAME is a
# test suite, run as a CI job runs it: `python3 -m pytest` inside it.
#
# Usage: scripts/gpu-real.sh OUTDIR [CASE...]   (needs target/release/cudawatch)
#   STAGE_TIMEOUT  per tool stage, seconds (default 150)
#   PARALLEL       programs at once on the one GPU (default 4)
#   RUN_FLAGS      more `cudawatch run` flags (e.g. "-j 1": one stage at a time)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: gpu-real.sh OUTDIR}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
SRC=$ROOT/tests/gpu/real
export PATH=$PATH:/usr/local/cuda/bin
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=($(cd "$SRC" && ls *.py | sed 's/\.py$//') $(cd "$SRC" && ls -d pytest_*))

# Extensions built with load_inline are compiled once here, so that no
# stage's time limit is spent in nvcc (torch caches the build).
# Only those among the cases: runs of the corpus in parts at once would
# each wait on torch's build lock for the others'.
for c in extension_off_by_one user_kernel_race; do
  [[ " ${cases[*]} " == *" $c "* ]] || continue
  [ -f "$SRC/$c.py" ] && timeout 300 python3 "$SRC/$c.py" >"$OUTDIR/$c.warmup.txt" 2>&1
done

# Each run folder is made inside the program's folder under a relative
# name, as a user's `cudawatch-runs/` is, and moved out afterwards: the
# reports name the program's files and their raw artifacts from there, not
# the GPU host's folders. The folder's name has OUTDIR's own, so two
# corpora at once (benches/corpus-equal.sh) keep apart.
one() {
  local c=$1 dir=$SRC program=(python3 "$1.py") code
  [ -d "$SRC/$c" ] && dir=$SRC/$c program=(python3 -m pytest)
  cd "$dir" || return
  local runs=cudawatch-runs/$(basename "$OUTDIR")
  rm -rf "${runs:?}/$c"
  "$CW" --color never run --out-dir "$runs/$c" \
    --timeout "${STAGE_TIMEOUT:-150}" ${RUN_FLAGS:-} --format json -- "${program[@]}" \
    >"$OUTDIR/$c.json" 2>"$OUTDIR/$c.txt" </dev/null
  code=$?
  mkdir -p "$OUTDIR/runs" && rm -rf "$OUTDIR/runs/$c" && mv "$runs/$c" "$OUTDIR/runs/$c"
  echo "$c exit=$code" >>"$OUTDIR/exits.txt"
}
export -f one
export CW SRC OUTDIR RUN_FLAGS
printf '%s\n' "${cases[@]}" | xargs -P "${PARALLEL:-4}" -I{} bash -c 'one {}'
sort "$OUTDIR/exits.txt"
