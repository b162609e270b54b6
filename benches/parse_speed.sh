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

# Runs both parsers REPEAT times, alternating, and prints the median wall
# time and the peak RSS of each (getrusage of the finished child).
REPEAT=${REPEAT:-3}
python3 - "$REPEAT" "$DATA/memcheck-big.xml" <<'PY'
import os, resource, statistics, subprocess, sys, time

repeat, xml = int(sys.argv[1]), sys.argv[2]
commands = {
    "cudawatch parse": ["./target/release/cudawatch", "parse", "--format", "json", xml],
    "python iterparse baseline": ["python3", "benches/baseline_parse.py", xml],
}
times = {name: [] for name in commands}
peaks = {name: 0.0 for name in commands}
for _ in range(repeat):
    for name, cmd in commands.items():
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.execvp(cmd[0], cmd)
        _, _, usage = os.wait4(pid, 0)
        times[name].append(time.perf_counter() - start)
        peaks[name] = max(peaks[name], usage.ru_maxrss / 1024)
size = os.path.getsize(xml) / 1024 / 1024
print(f"\n{'parser (%.0f MB XML, median of %d)' % (size, repeat):<40} {'seconds':>8} {'peak MiB':>9}")
for name in commands:
    print(f"{name:<40} {statistics.median(times[name]):>8.2f} {peaks[name]:>9.1f}")
ratio = statistics.median(times["python iterparse baseline"]) / statistics.median(times["cudawatch parse"])
print(f"cudawatch is {ratio:.1f}x faster than the baseline")
PY
