#!/usr/bin/env bash
# The wheel as a Python user gets it: built (scripts/build-wheel.sh),
# installed with pip into a fresh virtual environment, and the README's
# first command run with the `cudawatch` that pip put on the venv's PATH.
# Fails on any difference from what the README promises (exit 1: the
# example run has findings; the HTML page written). Run by .ci/run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHEEL=$("$ROOT/scripts/build-wheel.sh" | tail -1)
case "$WHEEL" in
  *-py3-none-manylinux*_x86_64.whl) ;;
  *) echo "test-wheel: not a manylinux x86_64 wheel: $WHEEL" >&2; exit 1 ;;
esac
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check "$WHEEL"
export PATH="$WORK/venv/bin:/usr/bin:/bin"
[ "$(command -v cudawatch)" = "$WORK/venv/bin/cudawatch" ] ||
  { echo "test-wheel: cudawatch is not the venv's: $(command -v cudawatch)" >&2; exit 1; }
cudawatch --version
# No path of the builder's machine in the binary: its cargo and rustup
# homes, the checkout (scripts/build-wheel.sh remaps them). Not the home
# folder as such: the built-in example report holds the GPU host's paths
# (/root/out/...), which are data, whoever builds.
BIN=$WORK/venv/bin/cudawatch
for path in "${CARGO_HOME:-$HOME/.cargo}/" "${RUSTUP_HOME:-$HOME/.rustup}/" "$ROOT/"; do
  if LC_ALL=C grep -q -F -- "$path" "$BIN"; then
    echo "test-wheel: the binary names $path $(LC_ALL=C grep -c -F -a -- "$path" "$BIN") times" >&2
    exit 1
  fi
done
# The README's first command, after its `cargo build --release &&`, with
# the installed binary instead of ./target/release/cudawatch.
COMMAND=$(grep -m1 '^cargo build --release && ./target/release/cudawatch ' "$ROOT/README.md" |
  sed -e 's|^cargo build --release && ./target/release/cudawatch ||')
[ -n "$COMMAND" ] || { echo "test-wheel: the README's first command was not found" >&2; exit 1; }
cd "$ROOT"
set +e
# shellcheck disable=SC2086 # the README's words, split as a shell would
(cd "$WORK" && cp -r "$ROOT/docs" . && cudawatch $COMMAND >"$WORK/out.txt" 2>&1)
code=$?
set -e
if [ "$code" != 1 ] || ! grep -q '^FINDINGS: ' "$WORK/out.txt" || [ ! -s "$WORK/oob_write.html" ]; then
  echo "test-wheel: the README's first command gave exit $code:" >&2
  cat "$WORK/out.txt" >&2
  exit 1
fi
# Without a clone: the real run bundled in the binary.
mkdir "$WORK/empty"
set +e
(cd "$WORK/empty" && cudawatch --color never report --example >"$WORK/example.txt" 2>&1)
code=$?
set -e
if [ "$code" != 1 ] || ! grep -q '^FINDINGS: root cause: memcheck invalid_access' "$WORK/example.txt"; then
  echo "test-wheel: cudawatch report --example gave exit $code:" >&2
  cat "$WORK/example.txt" >&2
  exit 1
fi
echo "test-wheel: ok: $(basename "$WHEEL") installs with pip and runs the README's first command and report --example"
