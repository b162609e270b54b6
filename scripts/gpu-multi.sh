#!/usr/bin/env bash
# The multi-GPU corpus (tests/gpu/multi/) on a machine with two GPUs:
# `cudawatch run -- torchrun --standalone --nproc_per_node=2 CASE.py` for
# every program, all at once, keeping each terminal report, JSON report and
# run directory, then the table of docs/examples/multi/README.md.
#
# Usage: scripts/gpu-multi.sh OUTDIR [CASE...]   (needs target/release/cudawatch)
#   TABLE_ONLY=1   no runs: the table of OUTDIR's earlier runs, each report
#                  judged again by this binary beside the run's own exit
#   STAGE_TIMEOUT  per tool stage, seconds (default 200)
#   PARALLEL       programs at once (default 2: with all eight at once on two
#                  H200s, most ranks' compute-sanitizers never attached within
#                  their launch timeout and the workers hung; with three, a
#                  plain run took 139 s where it took 32 s with two)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: gpu-multi.sh OUTDIR}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=${CW:-$ROOT/target/release/cudawatch}
SRC=$ROOT/tests/gpu/multi
export PATH=$PATH:/usr/local/cuda/bin
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(ddp_step ddp_amp_step fsdp_step bad_label_rank1 oob_kernel_rank1 oom_rank1 stream_race_rank1 collective_mismatch)

# load_inline's build, once, so that no stage's limit is spent in nvcc
# (only when the program that needs it is run).
if [ "${TABLE_ONLY:-}" != 1 ] && printf '%s\n' "${cases[@]}" | grep -qx oob_kernel_rank1; then
  (cd "$SRC" && timeout 300 python3 -c 'src = open("oob_kernel_rank1.py").read(); exec(src[:src.index("rank, world")])' \
    >"$OUTDIR/build.txt" 2>&1)
fi

# Each run folder is made inside the programs' folder under a relative name
# and moved out after, as scripts/gpu-real.sh does: the reports name the
# programs' files from there, not the GPU host's folders.
one() {
  local c=$1 start end runs
  runs=cudawatch-runs/$(basename "$OUTDIR")
  start=$(date +%s)
  cd "$SRC" && rm -rf "${runs:?}/$c" && "$CW" --color never run --out-dir "$runs/$c" \
    --timeout "${STAGE_TIMEOUT:-200}" --format json -- \
    torchrun --standalone --nproc_per_node=2 "$c.py" \
    >"$OUTDIR/$c.json" 2>"$OUTDIR/$c.txt" </dev/null
  local code=$?
  end=$(date +%s)
  mkdir -p "$OUTDIR/runs" && rm -rf "$OUTDIR/runs/$c" && mv "$runs/$c" "$OUTDIR/runs/$c"
  echo "$c $code $((end - start))" >>"$OUTDIR/exits.txt"
}
export -f one
export CW SRC OUTDIR
[ "${TABLE_ONLY:-}" = 1 ] || printf '%s\n' "${cases[@]}" | xargs -P "${PARALLEL:-2}" -I{} bash -c 'one {}'
sort "$OUTDIR/exits.txt"
# The table: each program, its exit code in the run, the exit of its JSON
# report judged again by this binary (the same unless judging changed
# since), the check's wall time and the verdict's first line as judged now.
python3 - "$OUTDIR" "$CW" >"$OUTDIR/README.md" <<'PY'
import json, os, subprocess, sys
out, cw = sys.argv[1], sys.argv[2]
rows = {}
for line in open(os.path.join(out, "exits.txt")):
    case, code, secs = line.split()
    rows[case] = (int(code), int(secs))
print("| program | exit | judged now | check (s) | verdict |")
print("| --- | --- | --- | --- | --- |")
for case in sorted(rows):
    code, secs = rows[case]
    now = subprocess.run([cw, "--color", "never", "report", os.path.join(out, case + ".json"),
                          "--format", "json"], capture_output=True, text=True)
    try:
        verdict = json.loads(now.stdout)["verdict"][0]
        text = verdict["label"].upper() + ": " + verdict["text"]
    except Exception as error:
        text = f"(no report: {error})"
    print(f"| `{case}` | {code} | {now.returncode} | {secs} | {text.replace('|', '/')} |")
PY
cat "$OUTDIR/README.md"
