#!/usr/bin/env bash
# doctor's probes as the GPU machine answers them: src/doctor/probe.cu built
# with nvcc, then run under compute-sanitizer and under ncu with the options
# doctor uses (src/doctor/probe.rs). The tests' fake compute-sanitizer and
# ncu replay this file.
# Usage: scripts/capture-doctor-probes.sh > sample-reports/doctor/probes-h100.txt
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH=$PATH:/usr/local/cuda/bin
work=$(mktemp -d)
probe=$work/probe
nvcc -arch=native -o "$probe" "$ROOT/src/doctor/probe.cu" >&2 || exit 1
echo "=== compute-sanitizer --tool memcheck --error-exitcode 86 PROBE"
compute-sanitizer --tool memcheck --error-exitcode 86 "$probe" 2>&1
echo "=== exit $?"
echo "=== ncu --metrics gpu__time_duration.sum --clock-control none PROBE"
ncu --metrics gpu__time_duration.sum --clock-control none "$probe" 2>&1
echo "=== exit $?"
rm -rf "$work"
