#!/usr/bin/env bash
# The core-dump corpus on the GPU machine: for each program, its own run
# (CUDA_LAUNCH_BLOCKING unset, as its user runs it), then
# `cudawatch run --stages plain,coredump` (the dump alone, for programs too
# slow for the sanitizers) and the default full check, one program at a
# time, then the table of docs/examples/coredump/README.md: exit, wall
# times, and where the report places the fault.
#
# Usage: scripts/gpu-coredump.sh OUTDIR [CASE...]   (needs target/release/cudawatch)
#   FULL=0   skip the default full check
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: gpu-coredump.sh OUTDIR}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
export PATH=$PATH:/usr/local/cuda/bin
# Built and run from the project's root with relative paths (binaries and
# run folders under build/coredump/, which git ignores; the run folders
# moved to OUTDIR/runs after): the reports name tests/gpu/... and
# build/coredump/bin/..., not the GPU host's folders.
cd "$ROOT" || exit 1
BIN=build/coredump/bin
RUNS=build/coredump/runs
rm -rf "$RUNS"
mkdir -p "$BIN" "$RUNS" "$OUTDIR/runs"
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(graph_wild_index torch_graph_triton_oob misaligned device_assert clean)
for c in graph_wild_index:coredump/graph_wild_index.cu misaligned:misaligned.cu \
  device_assert:device_assert.cu clean:clean.cu; do
  nvcc -lineinfo -arch=sm_90 -o "$BIN/${c%%:*}" "tests/gpu/${c#*:}" &
done
wait
# The command of CASE: a binary built above, else a Python program.
program() {
  if [ -x "$BIN/$1" ]; then echo "$BIN/$1"; else echo "python3 tests/gpu/coredump/$1.py"; fi
}
# seconds OUT ERR CMD...: runs CMD with its output in OUT and ERR, prints
# its wall time; its exit code goes to last.exit.
seconds() {
  local out=$1 err=$2 start end
  shift 2
  start=$(date +%s.%N)
  "$@" >"$out" 2>"$err" </dev/null
  echo $? >"$OUTDIR/last.exit"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }'
}
: >"$OUTDIR/times.txt"
for c in "${cases[@]}"; do
  # shellcheck disable=SC2046
  plain=$(seconds "$OUTDIR/$c.own.txt" "$OUTDIR/$c.own.err" $(program "$c"))
  # shellcheck disable=SC2046
  dump=$(seconds "$OUTDIR/$c-dump.json" "$OUTDIR/$c-dump.txt" "$CW" --color never run \
    --out-dir "$RUNS/$c-dump" --stages plain,coredump --format json -- $(program "$c"))
  dump_exit=$(cat "$OUTDIR/last.exit")
  full=- full_exit=-
  if [ "${FULL:-1}" = 1 ]; then
    # shellcheck disable=SC2046
    full=$(seconds "$OUTDIR/$c-full.json" "$OUTDIR/$c-full.txt" "$CW" --color never run \
      --out-dir "$RUNS/$c-full" --timeout 200 --format json -- $(program "$c"))
    full_exit=$(cat "$OUTDIR/last.exit")
  fi
  echo "$c $plain $dump $dump_exit $full $full_exit" >>"$OUTDIR/times.txt"
done
rm -rf "$OUTDIR/runs" && mv "$RUNS" "$OUTDIR/runs"
python3 - "$OUTDIR" >"$OUTDIR/README.md" <<'PY'
import json, os, sys
out = sys.argv[1]
print("| program | its own run | plain,coredump | exit | the dump's site | full check | exit | full check's first line |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except Exception:
        return None
for line in open(os.path.join(out, "times.txt")):
    case, plain, dump, dump_exit, full, full_exit = line.split()
    doc = load(case + "-dump.json")
    site = "-"
    if doc:
        for s in doc.get("findings", []):
            if s.get("tool") == "coredump":
                at = s.get("location") or {}
                where = f"{os.path.basename(at.get('file', '?'))}:{at.get('line', '?')}" if at else "no line"
                frame = s.get("python_frame") or {}
                launched = f", launched from line {frame['line']}" if frame.get("line") else ""
                site = f"{s.get('message', '')} at {where}{launched}"
                break
        else:
            stage = next((s for s in doc.get("stages", []) if s["tool"] == "coredump"), None)
            site = f"({stage['outcome']}: {stage['reason']})" if stage else "-"
    first = "-"
    full_doc = load(case + "-full.json")
    if full_doc and full_doc.get("verdict"):
        v = full_doc["verdict"][0]
        first = v["label"].upper() + ": " + v["text"]
    cell = lambda t: t.replace("|", "/")
    print(f"| `{case}` | {plain} s | {dump} s | {dump_exit} | {cell(site)} | {full} s | {full_exit} | {cell(first)[:200]} |")
PY
cat "$OUTDIR/README.md"
