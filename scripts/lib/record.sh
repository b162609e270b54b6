# Sourced by the capture scripts: one run, kept whole.
#
# record RUN CASE -- argv...: runs argv under a timeout ($RUN_TIMEOUT) in
# $OUTDIR/CASE/, leaving RUN.cmd (the exact command), .stdout, .stderr,
# .exit and .seconds.
record() {
  local run=$1 dir=$OUTDIR/$2
  shift 3
  mkdir -p "$dir"
  printf '%q ' "$@" >"$dir/$run.cmd"
  echo >>"$dir/$run.cmd"
  local start end
  start=$(date +%s.%N)
  timeout -k 10 "$RUN_TIMEOUT" "$@" >"$dir/$run.stdout" 2>"$dir/$run.stderr" </dev/null
  echo $? >"$dir/$run.exit"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }' >"$dir/$run.seconds"
}
