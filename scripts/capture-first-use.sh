#!/usr/bin/env bash
# What a person sees first, on a machine without a GPU, in a real terminal
# of 80 columns (tmux): the README's command, then a run with no CUDA tools
# installed. Writes docs/first-use.txt.
#
# Usage: scripts/capture-first-use.sh   (after cargo build --release)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/docs/first-use.txt
WORK=$(mktemp -d)
trap 'tmux kill-session -t first-use 2>/dev/null; rm -rf "$WORK"' EXIT
cat >"$WORK/session.sh" <<SCRIPT
cd "$ROOT"
export PATH=/usr/bin:/bin TERM=xterm-256color
unset CUDA_HOME
echo '\$ ./target/release/cudawatch report docs/examples/oob_write.report.json --report html=oob_write.html'
./target/release/cudawatch report docs/examples/oob_write.report.json --report html=$WORK/oob_write.html
echo "(exit \$?)"
cd "$WORK"
echo '\$ cudawatch run -- python3 -c "print(1)"      # no GPU tools on this machine'
"$ROOT/target/release/cudawatch" run -- python3 -c "print(1)"
echo "(exit \$?)"
echo DONE
SCRIPT
tmux new-session -d -s first-use -x 80 -y 50 "bash $WORK/session.sh; sleep 30"
for _ in $(seq 1 100); do
  tmux capture-pane -p -t first-use -S - | grep -q '^DONE' && break
  sleep 0.2
done
{
  echo "# scripts/capture-first-use.sh: tmux, 80 columns, no GPU, no CUDA tools"
  tmux capture-pane -p -t first-use -S - | grep -v '^DONE' | sed -e 's/[[:space:]]*$//'
} >"$OUT"
echo "wrote $OUT"
