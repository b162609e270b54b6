#!/usr/bin/env bash
# The CI gate as docs/ci.md sets it up, on the GPU machine: a project with a
# cudawatch.toml at its root, cudawatch started from a subdirectory, the
# policy and report paths coming from the file, one threshold from the
# environment. Keeps `cudawatch config`, the terminal report, the exit code
# and every report file in OUTDIR.
#
# Usage: scripts/gpu-gate-demo.sh OUTDIR   (needs target/release/cudawatch)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: gpu-gate-demo.sh OUTDIR}" && cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=$ROOT/target/release/cudawatch
export PATH=$PATH:/usr/local/cuda/bin
PROJECT=$(mktemp -d)
mkdir -p "$PROJECT/build" "$PROJECT/reports" "$PROJECT/src"
cp "$ROOT/tests/gpu/coalescing.cu" "$ROOT/tests/gpu/check.cuh" "$PROJECT/src/"
# Built from the project's root with a relative path, as a CI job builds.
(cd "$PROJECT" && nvcc -lineinfo -arch=sm_90 -o build/coalescing src/coalescing.cu)
cat >"$PROJECT/cudawatch.toml" <<'TOML'
# The project's root (this file's folder, also the default for a file
# here): reports name src/coalescing.cu from it, as code scanning wants,
# though cudawatch runs in build/.
source-root = "."
fail-on = "error"
stages = ["plain", "memcheck", "racecheck", "ncu"]
report = ["sarif=reports/cudawatch.sarif", "junit=reports/junit.xml",
          "markdown=reports/summary.md", "html=reports/cudawatch.html"]
max-wasted-sectors = 90
max-line-wasted-sectors = 50
TOML
cp "$PROJECT/cudawatch.toml" "$OUTDIR/cudawatch.toml"
cd "$PROJECT/build"
export CUDAWATCH_MIN_MEMORY_HEADROOM=20
"$CW" --color never config >"$OUTDIR/config.txt" 2>&1
"$CW" --color never run --out-dir ../run -- ./coalescing >"$OUTDIR/run.txt" 2>&1
echo "exit=$?" >>"$OUTDIR/run.txt"
cp "$PROJECT"/reports/* "$OUTDIR/"
