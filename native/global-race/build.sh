#!/usr/bin/env bash
# Builds the global-race tool (docs/global-race.md) into OUT (default
# target/global-race/): libglobal-race.so, the library loaded into the
# program with LD_PRELOAD, and patches.fatbin beside it, the device
# functions it patches in. Needs nvcc (NVCC), a host C++ compiler (CXX,
# default g++) and a compute-sanitizer's Sanitizer API (its include/ and
# libsanitizer-public.so: the toolkit's, or PyPI's
# nvidia-cuda-sanitizer-api) as SANITIZER_DIR or on PATH. cudawatch
# carries this script and the sources, and runs it on first use of the
# stage where no build is found (src/doctor/global_race_tool.rs); in a
# checkout, run it beside `cargo build --release`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/target/global-race}
if [ -z "${SANITIZER_DIR:-}" ]; then
  sanitizer=$(command -v compute-sanitizer) || { echo "build.sh: no compute-sanitizer on PATH; set SANITIZER_DIR" >&2; exit 1; }
  SANITIZER_DIR=$(dirname "$(readlink -f "$sanitizer")")
  # The toolkit's bin/compute-sanitizer is a launcher; its API is beside bin/.
  [ -f "$SANITIZER_DIR/include/sanitizer.h" ] || SANITIZER_DIR=$SANITIZER_DIR/../compute-sanitizer
fi
[ -f "$SANITIZER_DIR/include/sanitizer.h" ] || { echo "build.sh: no include/sanitizer.h in $SANITIZER_DIR" >&2; exit 1; }
NVCC=${NVCC:-nvcc}
cuda_include=$(dirname "$(readlink -f "$(command -v "$NVCC")")")/../include
mkdir -p "$out"
# Every architecture the toolkit can build for, from Ampere on.
# (Read whole first: `nvcc | grep -q` under pipefail drops an architecture
# whenever grep's early exit kills nvcc with SIGPIPE, as a loaded machine
# showed with the tests' fake.)
listed=$("$NVCC" --list-gpu-arch 2>/dev/null || true)
archs=()
for sm in 80 86 89 90 100 120; do
  grep -qx "compute_$sm" <<<"$listed" && archs+=(-gencode "arch=compute_$sm,code=sm_$sm")
done
[ ${#archs[@]} -gt 0 ] || { echo "build.sh: $NVCC --list-gpu-arch lists none of sm_80 to sm_120" >&2; exit 1; }
"$NVCC" -I"$SANITIZER_DIR/include" --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch \
  "${archs[@]}" -o "$out/patches.fatbin" "$here/patches.cu"
"${CXX:-g++}" -std=c++17 -O2 -fPIC -shared -Wall -Wextra -I"$SANITIZER_DIR/include" -I"$cuda_include" \
  -o "$out/libglobal-race.so" "$here/global_race.cpp" \
  -L"$SANITIZER_DIR" -lsanitizer-public -Wl,-rpath,"$SANITIZER_DIR"
echo "built $out/libglobal-race.so and $out/patches.fatbin (${#archs[@]} arch flags)"
