#!/usr/bin/env bash
# Overhead of cudawatch over the same tool commands run by a plain shell
# script: for each program, time `cudawatch run` (all stages) and a shell
# loop that runs exactly the commands cudawatch ran (read back from its
# run directory's stage.json files), side by side, alternating, N times.
#
# Usage: scripts/bench-overhead.sh OUTDIR PROGRAM... (needs target/release/cudawatch)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: bench-overhead.sh OUTDIR PROGRAM...}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
REPEAT=${REPEAT:-3}
export PATH=$PATH:/usr/local/cuda/bin

now() { date +%s.%N; }

# The commands of a finished run, one shell line each, environment included.
commands_of() {
  python3 - "$1" <<'PY'
import json, os, shlex, sys
run = sys.argv[1]
for tool in json.load(open(os.path.join(run, "run.json")))["stages"]:
    st = json.load(open(os.path.join(run, tool, "stage.json")))
    env = [e for e in st["env"] if not e.startswith("-")]
    out = shlex.quote(os.path.join(run + "-shell", tool))
    print(f"mkdir -p {out}; env {' '.join(map(shlex.quote, env))} {' '.join(map(shlex.quote, st['command']))} >{out}/stdout 2>{out}/stderr")
    if tool == "ncu":
        rep = shlex.quote(os.path.join(run, "ncu", "profile.ncu-rep"))
        for page in ("raw", "details"):
            print(f"ncu --import {rep} --csv --page {page} --print-units base >{out}/{page}.csv")
        for name in sorted(os.listdir(os.path.join(run, "ncu"))):
            if name.startswith("source-") and name.endswith(".csv"):
                launch = name[len("source-"):-len(".csv")]
                print(f"ncu --import {rep} --csv --page source --print-source cuda,sass --print-units base "
                      f"--launch-skip {launch} --launch-count 1 >{out}/{name}")
PY
}

printf '%-28s %10s %10s %8s\n' program cudawatch_s shell_s ratio | tee "$OUTDIR/overhead.txt"
for prog in "$@"; do
  name=$(basename "$prog")
  cw_total=0 sh_total=0
  for i in $(seq "$REPEAT"); do
    dir=$OUTDIR/$name-$i
    t0=$(now)
    "$CW" --color never run --out-dir "$dir" -- $prog >/dev/null 2>&1 </dev/null
    t1=$(now)
    commands_of "$dir" >"$dir.sh"
    t2=$(now)
    bash "$dir.sh" >/dev/null 2>&1 </dev/null
    t3=$(now)
    cw_total=$(awk -v a="$cw_total" -v b="$t0" -v c="$t1" 'BEGIN{print a + c - b}')
    sh_total=$(awk -v a="$sh_total" -v b="$t2" -v c="$t3" 'BEGIN{print a + c - b}')
  done
  awk -v n="$name" -v c="$cw_total" -v s="$sh_total" -v r="$REPEAT" \
    'BEGIN{printf "%-28s %10.2f %10.2f %8.3f\n", n, c / r, s / r, c / s}' | tee -a "$OUTDIR/overhead.txt"
done
