#!/usr/bin/env bash
# Re-renders the terminal reports in docs/examples/ and docs/examples/real/
# from their committed JSON reports with the current binary, after a change
# to judging (owners, consequences, the gate): the raw runs are the H100's,
# the verdict is today's. Progress lines the live run printed are kept;
# the real corpus's JSON reports, which carry their judgement, are renewed.
#
# Usage: scripts/rejudge-examples.sh   (needs target/debug/cudawatch or CW=...)
# (`cudawatch report` prints its text on stdout.)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CW=${CW:-$ROOT/target/debug/cudawatch}
for dir in "$ROOT/docs/examples" "$ROOT/docs/examples/real"; do
  : >"$dir/exits.txt.new"
  for json in "$dir"/*.report.json; do
    case=$(basename "$json" .report.json)
    txt=$dir/$case.txt
    # What the live run printed before its report (progress and notes)
    # and after it (where it wrote), around the report rendered today.
    { awk '/^cudawatch: /{exit} {print}' "$txt" 2>/dev/null
      "$CW" --color never report "$json" 2>&1
      grep -E '^(raw artifacts and report.json|wrote the )' "$txt" 2>/dev/null; } >"$txt.new"
    if [ "$dir" = "$ROOT/docs/examples/real" ]; then
      # These JSON reports carry their judgement (--format json): renew it.
      "$CW" --color never report "$json" --format json >"$json.new" 2>/dev/null
      code=$?
      mv "$json.new" "$json"
    else
      "$CW" --color never report "$json" >/dev/null 2>&1
      code=$?
    fi
    echo "$case exit=$code" >>"$dir/exits.txt.new"
    mv "$txt.new" "$txt"
  done
  mv "$dir/exits.txt.new" "$dir/exits.txt"
done
