#!/usr/bin/env bash
# docs/html-report.png: the `--report html` page of a real run rendered by
# this checkout's binary (the H100 run of extension_off_by_one, a PyTorch
# extension writing one element past its output: findings, source, the
# checklist and the coalescing chart), shot in headless Chromium at 1200
# pixels by tests/node/html-check.mjs. Needs node and Debian's chromium,
# as the HTML test does.
#
# Usage: scripts/screenshot-html.sh   (CW=... for another binary)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=${CW:-$ROOT/target/debug/cudawatch}
[ -x "$CW" ] || (cd "$ROOT" && cargo build)
[ -d "$ROOT/tests/node/node_modules" ] ||
  (cd "$ROOT/tests/node" && npm ci --no-audit --no-fund --loglevel=error)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Judged from the example's raw run; its exit (1: findings) is the page's.
(cd "$ROOT" && "$CW" --color never report docs/examples/real/extension_off_by_one.report.json \
  --report "html=$WORK/report.html" >/dev/null) || true
[ -s "$WORK/report.html" ] || { echo "screenshot-html: no page was written" >&2; exit 1; }
node "$ROOT/tests/node/html-check.mjs" "$WORK/report.html" "$ROOT/docs/html-report.png" 1200 >/dev/null
echo "wrote docs/html-report.png"
