#!/usr/bin/env bash
# Builds the `pip install cudawatch` wheel: the release binary in a
# manylinux2014 x86_64 wheel (maturin's binary bindings, linked with zig
# against glibc 2.17, as ruff and uv build theirs), into target/wheels/.
# Needs Python 3 and network access to PyPI for maturin and ziglang the
# first time; they go into target/wheel-tools/, never the user's Python.
#
# Usage: scripts/build-wheel.sh        (prints the wheel's path last)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLS=$ROOT/target/wheel-tools
if [ ! -x "$TOOLS/bin/maturin" ]; then
  python3 -m venv "$TOOLS"
  "$TOOLS/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2" ziglang
fi
rm -f "$ROOT"/target/wheels/cudawatch-*.whl
(cd "$ROOT" && PATH="$TOOLS/bin:$PATH" maturin build --release --zig \
  --compatibility manylinux2014 --target x86_64-unknown-linux-gnu --out target/wheels >&2)
ls "$ROOT"/target/wheels/cudawatch-*.whl
