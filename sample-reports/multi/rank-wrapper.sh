#!/bin/sh
compute-sanitizer --tool "$CAPTURE_TOOL" --xml --save "$CAPTURE_DIR/$CAPTURE_TOOL.rank%q{RANK}.xml" \
  --log-file "$CAPTURE_DIR/$CAPTURE_TOOL.rank%q{RANK}.log" --print-limit 0 $CAPTURE_EXITCODE \
  --target-processes all "$(command -v python3)" "$@"
status=$?
echo "$status" >"$CAPTURE_DIR/$CAPTURE_TOOL.rank$RANK.exit"
exit "$status"
