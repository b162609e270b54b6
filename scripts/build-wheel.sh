#!/usr/bin/env bash
# Builds the `pip install cudawatch` wheel: the release binary in a
# manylinux2014 x86_64 wheel (maturin's binary bindings, linked with zig
# against glibc 2.17, as ruff and uv build theirs), into target/wheels/.
# Needs Python 3 and network access to PyPI for maturin and ziglang the
# first time, at the versions and hashes of scripts/wheel-tools.txt; they
# go into target/wheel-tools/, never the user's Python.
#
# The binary names no path of the machine that built it: the cargo
# registry's sources and the checkout are remapped (`--remap-path-prefix`,
# in panic messages and debug info). Those flags differ from a plain
# `cargo build --release`'s, so the wheel builds into a target folder of
# its own, target/wheel/, which a second build (and a CI cache of target/)
# reuses: only cudawatch's own crates are compiled again.
#
# Usage: scripts/build-wheel.sh        (prints the wheel's path last)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLS=$ROOT/target/wheel-tools
if ! cmp -s "$ROOT/scripts/wheel-tools.txt" "$TOOLS/wheel-tools.txt" 2>/dev/null; then
  rm -rf "$TOOLS"
  python3 -m venv "$TOOLS"
  "$TOOLS/bin/pip" install --quiet --disable-pip-version-check --require-hashes \
    --only-binary=:all: -r "$ROOT/scripts/wheel-tools.txt"
  cp "$ROOT/scripts/wheel-tools.txt" "$TOOLS/wheel-tools.txt"
fi
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export RUSTFLAGS="--remap-path-prefix=$CARGO_HOME=/cargo --remap-path-prefix=$ROOT=/cudawatch ${RUSTFLAGS:-}"
export CARGO_TARGET_DIR=$ROOT/target/wheel
rm -f "$ROOT"/target/wheels/cudawatch-*.whl
(cd "$ROOT" && PATH="$TOOLS/bin:$PATH" maturin build --release --zig \
  --compatibility manylinux2014 --target x86_64-unknown-linux-gnu --out target/wheels >&2)
ls "$ROOT"/target/wheels/cudawatch-*.whl
