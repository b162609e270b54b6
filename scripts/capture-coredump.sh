#!/usr/bin/env bash
# Raw captures of the GPU core dump (tests/gpu/coredump/ and a few planted
# bugs of tests/gpu/): each program run plainly, with CUDA_LAUNCH_BLOCKING=1,
# and with the driver's core dump on exception under several generation
# flags; each dump's size, and what cuda-gdb-minimal (and, once, the full
# cuda-gdb) prints when it reads it. sample-reports/coredump/README.md says
# which file is which.
#
# Usage: scripts/capture-coredump.sh OUTDIR [flags]
#   flags: only which generation flags keep a device assert's dump readable
#          (the lightweight set's dump of an assert crashed the reader)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: capture-coredump.sh OUTDIR [flags]}" && cd "$1" && pwd)
PHASE=${2:-all}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
# shellcheck source=lib/record.sh
. "$ROOT/scripts/lib/record.sh"
environment
BIN=$(mktemp -d)
DUMPS=$(mktemp -d)
LIGHT=skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory
{
  command -v cuda-gdb cuda-gdb-minimal
  cuda-gdb-minimal --version | head -n 3
  ls /usr/local/cuda/bin | grep -i gdb
} >"$OUTDIR/readers.txt" 2>&1

for c in graph_wild_index:coredump/graph_wild_index.cu misaligned:misaligned.cu \
  device_assert:device_assert.cu clean:clean.cu; do
  nvcc -lineinfo -arch=sm_90 -o "$BIN/${c%%:*}" "$ROOT/tests/gpu/${c#*:}" \
    >"$OUTDIR/build-${c%%:*}.txt" 2>&1 &
done
wait

# read CASE RUN: every dump the run left, read by cuda-gdb-minimal.
read_dumps() {
  local c=$1 run=$2 f i=0
  ls -la "$DUMPS/$c/$run" >"$OUTDIR/$c/$run.dumps" 2>&1
  for f in "$DUMPS/$c/$run"/core*; do
    [ -f "$f" ] || continue
    RUN_TIMEOUT=120 record "$run.read$i" "$c" -- cuda-gdb-minimal -nx -batch \
      -ex "target cudacore $f" -ex "info cuda kernels" -ex bt
    i=$((i + 1))
  done
}

# dump CASE RUN FLAGS ENV... -- ARGV: the program with the core dump on.
dump() {
  local c=$1 run=$2 flags=$3
  shift 3
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  mkdir -p "$DUMPS/$c/$run"
  RUN_TIMEOUT=180 record "$run" "$c" -- env "${env[@]}" CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 \
    CUDA_COREDUMP_SHOW_PROGRESS=1 CUDA_COREDUMP_GENERATION_FLAGS="$flags" \
    CUDA_COREDUMP_FILE="$DUMPS/$c/$run/core.%p" "$@"
  read_dumps "$c" "$run"
}

one() {
  local c=$1
  shift
  cd "$ROOT/tests/gpu" || return
  RUN_TIMEOUT=180 record plain "$c" -- "$@"
  RUN_TIMEOUT=180 record blocking "$c" -- env CUDA_LAUNCH_BLOCKING=1 "$@"
  dump "$c" dump "" -- "$@"
  dump "$c" light "$LIGHT" -- "$@"
  dump "$c" light_noabort "$LIGHT,skip_abort" CUDA_LAUNCH_BLOCKING=1 -- "$@"
}

if [ "$PHASE" = flags ]; then
  cd "$ROOT/tests/gpu" || exit 1
  for flags in skip_global_memory skip_nonrelocated_elf_images \
    skip_global_memory,skip_shared_memory,skip_local_memory \
    skip_nonrelocated_elf_images,skip_global_memory; do
    run=flags-${flags//,/+}
    dump device_assert "$run" "$flags" -- "$BIN/device_assert"
    dump torch_index_oob "$run" "$flags" -- python3 torch_index_oob.py
    dump graph_wild_index "$run" "$flags" -- "$BIN/graph_wild_index"
  done
  du -sh "$DUMPS"/*/* >"$OUTDIR/dump-sizes.txt" 2>&1
  exit 0
fi
one graph_wild_index "$BIN/graph_wild_index"
# Which flags keep the reader working, and what the full cuda-gdb does.
dump graph_wild_index constbank "$LIGHT,skip_constbank_memory" -- "$BIN/graph_wild_index"
dump graph_wild_index gzip "$LIGHT,gzip_compress" -- "$BIN/graph_wild_index"
f=$(ls "$DUMPS/graph_wild_index/dump"/core* | head -n 1)
RUN_TIMEOUT=120 record fullgdb graph_wild_index -- cuda-gdb -nx -batch \
  -ex "target cudacore $f" -ex bt
one torch_graph_triton_oob python3 coredump/torch_graph_triton_oob.py
one misaligned "$BIN/misaligned"
one device_assert "$BIN/device_assert"
one torch_index_oob python3 torch_index_oob.py
one clean "$BIN/clean"
du -sh "$DUMPS"/*/* >"$OUTDIR/dump-sizes.txt" 2>&1
