#!/usr/bin/env bash
# Captures real tool output for cudawatch's parser fixtures.
#
# Runs on the GPU machine (CUDA 13, compute-sanitizer and ncu on PATH or in
# /usr/local/cuda/bin). Builds every planted-bug program in tests/gpu/ with
# `nvcc -lineinfo`, then runs each program:
#   plain      CUDA_LAUNCH_BLOCKING=1 <program>
#   memcheck   compute-sanitizer --tool memcheck --leak-check full ...
#   racecheck, initcheck, synccheck   likewise
#   ncu        profile to a report, then --import it as CSV (raw, details, source)
# with the flags `cudawatch run` uses, so the fixtures are what the supervisor
# really reads. Every run leaves <run>.cmd, .stdout, .stderr, .exit and
# .seconds beside its artifacts in OUTDIR/<case>/.
#
# Usage: scripts/capture-samples.sh OUTDIR [CASE|specials|teardown|variants|ncu|ncu-lean|env ...]
set -uo pipefail

OUTDIR=$(mkdir -p "${1:?usage: capture-samples.sh OUTDIR [CASE...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/tests/gpu
BIN=$OUTDIR/.bin
mkdir -p "$BIN"
export PATH=$PATH:/usr/local/cuda/bin
PY=${PYTHON:-python3}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
NCU_METRICS=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct,gpu__time_duration.sum

CPP_CASES=(oob_read oob_write misaligned smem_race warp_race uninit_read leak device_assert
  invalid_launch api_error divergent_barrier coalescing no_kernel_image clean)
PY_CASES=(torch_index_oob torch_oom triton_hidden_oob cupy_cublas_error torch_train_clean)

# shellcheck source=lib/record.sh
. "$(dirname "$0")/lib/record.sh"

# The program of a case: a Python script or a binary built from a .cu file.
target_of() {
  if [ -f "$SRC/$1.py" ]; then echo "$PY $SRC/$1.py"; else echo "$BIN/$1"; fi
}

# Sanitizer stages of Python programs turn PyTorch's caching allocator off,
# as cudawatch does: otherwise memcheck cannot see overruns inside its blocks.
stage_env() {
  if [ -f "$SRC/$1.py" ]; then echo "PYTORCH_NO_CUDA_MEMORY_CACHING=1"; fi
}

build() {
  local c=$1 arch=(-arch=sm_90)
  [ -f "$SRC/$c.cu" ] || return 0
  [ "$c" = no_kernel_image ] && arch=(-gencode arch=compute_100,code=sm_100)
  record build "$c" -- nvcc -lineinfo "${arch[@]}" -o "$BIN/$c" "$SRC/$c.cu"
}

plain() {
  # shellcheck disable=SC2046
  record plain "$1" -- env CUDA_LAUNCH_BLOCKING=1 $(target_of "$1")
}

# sanitize CASE TOOL RUN [extra flags...]: one compute-sanitizer run.
sanitize() {
  local c=$1 tool=$2 run=$3
  shift 3
  local extra=("$@") limit=(--print-limit 0)
  # compute-sanitizer rejects a flag given twice, so a variant's own
  # --print-limit replaces the default rather than following it.
  for a in "$@"; do [ "$a" = --print-limit ] && limit=(); done
  [ "$tool" = memcheck ] && [ -z "${NO_LEAK:-}" ] && extra=(--leak-check full "${extra[@]}")
  # shellcheck disable=SC2046
  record "$run" "$c" -- env ${SAN_ENV-$(stage_env "$c")} CUDAWATCH_STAGE="$tool" \
    compute-sanitizer --tool "$tool" --xml --save "$OUTDIR/$c/$run.xml" "${limit[@]}" \
    --error-exitcode 86 --target-processes all "${extra[@]}" $(target_of "$c")
}

one_case() {
  local c=$1
  plain "$c"
  for t in memcheck racecheck initcheck synccheck; do sanitize "$c" "$t" "$t"; done
}

# ncu_case CASE RUN [ncu filter flags...]: profile, then import as CSV pages.
# NCU_SECTION=lean profiles with cudawatch's CoalescingSource section (the
# stage's since issue 23) instead of NVIDIA's SourceCounters; NCU_TARGETS
# is --target-processes (all; the stage's application-only when the plain
# run saw no other process of the program on the GPU).
ncu_case() {
  local c=$1 run=$2
  shift 2
  local dir=$OUTDIR/$c
  local section=(--section SourceCounters)
  [ "${NCU_SECTION:-}" = lean ] &&
    section=(--section-folder "$ROOT/src/tools/ncu" --section CoalescingSource)
  # shellcheck disable=SC2046
  record "$run" "$c" -- ncu --target-processes "${NCU_TARGETS:-all}" --clock-control none \
    --metrics "$NCU_METRICS" "${section[@]}" --import-source yes "$@" \
    -f -o "$dir/$run" $(target_of "$c")
  [ -f "$dir/$run.ncu-rep" ] || return 0
  record "$run-raw" "$c" -- ncu --import "$dir/$run.ncu-rep" --csv --page raw --print-units base
  record "$run-details" "$c" -- ncu --import "$dir/$run.ncu-rep" --csv --page details --print-units base
  local launches
  launches=$(($(wc -l <"$dir/$run-raw.stdout") - 2))
  for ((i = 0; i < launches && i < 6; i++)); do
    record "$run-source-$i" "$c" -- ncu --import "$dir/$run.ncu-rep" --csv --page source \
      --print-source cuda,sass --print-units base --launch-skip "$i" --launch-count 1
  done
}


specials() {
  # Variants that show the tools' traps.
  sanitize oob_write memcheck memcheck-limit5 --print-limit 5
  sanitize smem_race racecheck racecheck-all --racecheck-report all
  sanitize warp_race racecheck racecheck-all --racecheck-report all
  sanitize leak initcheck initcheck-unused --track-unused-memory
  SAN_ENV="" sanitize triton_hidden_oob memcheck memcheck-cached
  record memcheck no_cuda -- compute-sanitizer --tool memcheck --xml \
    --save "$OUTDIR/no_cuda/memcheck.xml" --print-limit 0 --error-exitcode 86 \
    --target-processes all "$PY" -c 'print("no gpu here")'
  # A killed run: SIGTERM, then SIGKILL, 20 s in; keep whatever XML is there.
  build hang_after_error
  RUN_TIMEOUT=20 sanitize hang_after_error memcheck memcheck
}

# --leak-check full on a PyTorch program crashes the interpreter at teardown
# (cudawatch leaves the leak check off for Python); the same run without it.
teardown() {
  sanitize torch_train_clean memcheck memcheck-leakcheck
  NO_LEAK=1 sanitize torch_train_clean memcheck memcheck-noleak
}

# The shapes users bring to `cudawatch parse`, made with other flags than
# cudawatch's own: ncu's live --csv output (the program's lines and ==PROF==
# mixed in), pages imported without --print-units base, a profile with only
# the SourceCounters section, --print-details all; and a CI log in which a
# test runner's lines and timestamps surround compute-sanitizer's.
variants() {
  local c=coalescing dir=$OUTDIR/coalescing
  mkdir -p "$dir"
  record ncu-live-raw "$c" -- ncu --csv --page raw --metrics "$NCU_METRICS" "$BIN/$c"
  record ncu-live-details "$c" -- ncu --csv --page details --section SourceCounters \
    --print-details all "$BIN/$c"
  record ncu-sc "$c" -- ncu --section SourceCounters -f -o "$dir/ncu-sc" "$BIN/$c"
  if [ -f "$dir/ncu-sc.ncu-rep" ]; then
    record ncu-sc-raw "$c" -- ncu --import "$dir/ncu-sc.ncu-rep" --csv --page raw
    record ncu-sc-details-all "$c" -- ncu --import "$dir/ncu-sc.ncu-rep" --csv --page details \
      --print-details all
  fi
  record ncu-units "$c" -- ncu --metrics "$NCU_METRICS" --section SourceCounters -f \
    -o "$dir/ncu-units" "$BIN/$c"
  [ -f "$dir/ncu-units.ncu-rep" ] &&
    record ncu-units-raw "$c" -- ncu --import "$dir/ncu-units.ncu-rep" --csv --page raw
  # A CI job: pytest runs two tests, each under compute-sanitizer, and the
  # runner prefixes every line with a timestamp as GitHub Actions does.
  mkdir -p "$OUTDIR/ci_log"
  cp "$SRC/ci/test_kernels.py" "$OUTDIR/ci_log/"
  record pytest-github ci_log -- bash "$ROOT/scripts/ci-job-log.sh" "$OUTDIR/ci_log" "$BIN"
}

ncu_runs() {
  ncu_case coalescing ncu
  ncu_case coalescing ncu-nomatch -k regex:does_not_exist
  ncu_case torch_train_clean ncu --filter-mode per-launch-config -c 1
}

# The stage's profile since issue 23: the lean section, and the program's
# own process only for the PyTorch program.
ncu_lean_runs() {
  NCU_SECTION=lean ncu_case coalescing ncu-lean
  NCU_SECTION=lean NCU_TARGETS=application-only ncu_case torch_train_clean ncu-lean \
    --filter-mode per-launch-config -c 1
}

export -f record target_of stage_env plain sanitize one_case
export OUTDIR SRC BIN PY RUN_TIMEOUT

cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(env "${CPP_CASES[@]}" "${PY_CASES[@]}" specials ncu)

programs=()
for c in "${cases[@]}"; do
  case $c in
    env) environment ;;
    specials) build oob_write; build smem_race; build warp_race; build leak ;;
    teardown) ;;
    variants) build coalescing; build oob_write; build leak ;;
    ncu|ncu-lean) build coalescing ;;
    *) build "$c"; programs+=("$c") ;;
  esac
done
# Runs of different programs are independent processes on one GPU: run a few
# at a time. ncu runs go last and alone, since profiling serialises the GPU.
printf '%s\n' "${programs[@]}" | xargs -r -P "${PARALLEL:-6}" -I{} bash -c 'one_case {}'
for c in "${cases[@]}"; do
  case $c in
    specials) specials ;;
    teardown) teardown ;;
    variants) variants ;;
    ncu) ncu_runs ;;
    ncu-lean) ncu_lean_runs ;;
  esac
done
rm -rf "$BIN"
echo "captured into $OUTDIR"
