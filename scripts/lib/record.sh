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

# environment: the machine and tool versions a capture was made with, in
# $OUTDIR/ENVIRONMENT.txt.
environment() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvcc --version | tail -n 2
    compute-sanitizer --version | tail -n 2
    ncu --version | tail -n 2
    ${PY:-python3} -c 'import sys, torch, triton, cupy; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "cupy", cupy.__version__, "cudnn", torch.backends.cudnn.version())'
    uname -r
  } >"$OUTDIR/ENVIRONMENT.txt" 2>&1
}
