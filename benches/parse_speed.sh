#!/usr/bin/env bash
# Benchmark: `cudawatch parse` against a Python iterparse baseline on a
# memcheck XML of at least 200 MB built from real records, side by side.
# Prints both wall times, the ratio, and each one's peak memory.
#
# Usage: benches/parse_speed.sh [MB]   (builds target/release/cudawatch first)
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-200}
DATA=bench-data
mkdir -p "$DATA"
cargo build --release -q
python3 benches/make_big_xml.py sample-reports/oob_write/memcheck.xml "$DATA/memcheck-big.xml" "$MB"

# measure NAME CMD...: wall seconds and peak RSS (MiB) of CMD, via getrusage.
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
name, cmd = sys.argv[1], sys.argv[2:]
t = time.perf_counter()
subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{name} {wall:.2f} {peak:.1f}")
PY
}

read -r _ cw_s cw_mb < <(measure cudawatch ./target/release/cudawatch parse --format json "$DATA/memcheck-big.xml")
read -r _ py_s py_mb < <(measure python python3 benches/baseline_parse.py "$DATA/memcheck-big.xml")
size=$(du -m "$DATA/memcheck-big.xml" | cut -f1)
echo
printf '%-28s %10s %12s\n' "parser (${size} MB XML)" "seconds" "peak MiB"
printf '%-28s %10s %12s\n' "cudawatch parse" "$cw_s" "$cw_mb"
printf '%-28s %10s %12s\n' "python iterparse baseline" "$py_s" "$py_mb"
awk -v a="$py_s" -v b="$cw_s" 'BEGIN { printf "cudawatch is %.1fx faster than the baseline\n", a / b }'
