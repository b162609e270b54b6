#!/usr/bin/env bash
# Captures real tool output for the programs of tests/gpu/beyond/ (issue 21:
# what cudawatch got wrong beyond its own corpus), on the GPU machine.
#
# Every run leaves <run>.cmd, .stdout, .stderr, .exit and .seconds (and its
# XML or CSV) in OUTDIR/<case>/, like scripts/capture-samples.sh. Sanitizer
# runs use cudawatch's own flags unless the run's name says otherwise
# (`-user`: the flags a user types; `-recover`: kernel-level recovery).
#
# Usage: scripts/capture-beyond.sh OUTDIR [PHASE...]
#   phases: programs library corpus-recover ncu hog cudawatch two_bugs host-stacks
#           launch-signs ncu-live empty_then_reduce gemm_reads crowded trim
#           floods launch-ranges unchecked-writes mps sweep-variance async-loads
#           faulting-launch race-launch-lines pytest-formats ddp-ports
#           many-processes cudagraph-stacks manual-graphs steps cudnn-benchmark
#           compile-csan hf-trainer two-ranks inference-steps generation-steps
#           jax jax-cudawatch jax-trim jax-oom retry-loop racecheck-blocks
#           indirect-barriers stackless-initcheck library-named
#           ncu-framework-filter
#           (default: programs library corpus-recover ncu two_bugs launch-signs
#           ncu-live hog cudawatch)
#   needs target/release/cudawatch for the `cudawatch` and `hog` phases
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: capture-beyond.sh OUTDIR [PHASE...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/tests/gpu/beyond
BIN=$OUTDIR/.bin
CW=$ROOT/target/release/cudawatch
mkdir -p "$BIN"
export PATH=$PATH:/usr/local/cuda/bin
PY=${PYTHON:-python3}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
NCU_METRICS=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct,gpu__time_duration.sum
CPP=(inlined_syncwarp unrolled_uninit alloc_probe no_kernels two_bugs)

# shellcheck source=lib/record.sh
. "$(dirname "$0")/lib/record.sh"

# cudawatch_run CASE NAME SRCDIR LIMIT [RUN FLAG...] -- PROGRAM...:
# `cudawatch run` of PROGRAM inside SRCDIR (RUN_TIMEOUT LIMIT), recorded as
# CASE/NAME.*, its run directory CASE/run-NAME, its report.json kept as
# CASE/NAME.report.json.
cudawatch_run() {
  local c=$1 name=$2 dir=$3 limit=$4 flags=()
  shift 4
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    flags+=("$1")
    shift
  done
  shift
  (cd "$dir" && RUN_TIMEOUT=$limit record "$name" "$c" -- "$CW" --color never run \
    "${flags[@]}" --out-dir "$OUTDIR/$c/run-$name" --format json -- "$@")
  cp "$OUTDIR/$c/run-$name/report.json" "$OUTDIR/$c/$name.report.json"
}

program_of() {
  case $1 in
    *.py) echo "$PY $1" ;;
    *" "*) echo "$1" ;;
    /*) echo "$1" ;;
    *) if [ -f "$SRC/$1.py" ]; then echo "$PY $SRC/$1.py"; else echo "$BIN/$1"; fi ;;
  esac
}

# sanitize CASE TOOL RUN [flags...]: one compute-sanitizer run, XML saved.
sanitize() {
  local c=$1 tool=$2 run=$3
  shift 3
  # shellcheck disable=SC2046
  record "$run" "$c" -- env ${SAN_ENV:-} CUDAWATCH_STAGE="$tool" compute-sanitizer --tool "$tool" \
    --xml --save "$OUTDIR/$c/$run.xml" --print-limit 0 --error-exitcode 86 \
    --target-processes all "$@" $(program_of "${PROGRAM:-$c}")
}

all_tools() {
  local c=$1
  # shellcheck disable=SC2046
  record plain "$c" -- env CUDA_LAUNCH_BLOCKING=1 $(program_of "$c")
  sanitize "$c" memcheck memcheck --leak-check full
  for t in racecheck initcheck synccheck; do sanitize "$c" "$t" "$t"; done
}

programs() {
  for c in "${CPP[@]}"; do
    record build "$c" -- nvcc -lineinfo -arch=sm_90 -o "$BIN/$c" "$SRC/$c.cu"
  done
  for c in "${CPP[@]}"; do all_tools "$c" & done
  (
    all_tools cupy_rawkernel_race
    sanitize two_bugs memcheck memcheck-recover --leak-check full --destroy-on-device-error kernel
  ) &
  wait
}

# Two independent bugs, with memcheck's default and with kernel-level
# recovery (a later fix of the program: the first version's bugs landed in
# neighbouring allocations, where memcheck cannot see them).
two_bugs() {
  record build two_bugs -- nvcc -lineinfo -arch=sm_90 -o "$BIN/two_bugs" "$SRC/two_bugs.cu"
  all_tools two_bugs
  sanitize two_bugs memcheck memcheck-recover --leak-check full --destroy-on-device-error kernel
}

# What the sanitizers print about launches, with and without kernels: is
# there any sign of "no launch" to corroborate ncu's "No kernels"?
launch_signs() {
  record build no_kernels -- nvcc -lineinfo -arch=sm_90 -o "$BIN/no_kernels" "$SRC/no_kernels.cu"
  record build alloc_probe -- nvcc -lineinfo -arch=sm_90 -o "$BIN/alloc_probe" "$SRC/alloc_probe.cu"
  for c in no_kernels alloc_probe; do
    record memcheck-info "$c" -- compute-sanitizer --tool memcheck --print-level info \
      --print-session-details "$BIN/$c"
  done
}

# The guide's "4:1 ratio": live `ncu --csv` with only the request and
# sector counts (no bytes-used share, no SourceCounters), as a user types
# it, on the default page and on the raw page.
ncu_live() {
  local m=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
  record build coalescing_ratio -- nvcc -lineinfo -arch=sm_90 -o "$BIN/coalescing" "$ROOT/tests/gpu/coalescing.cu"
  record ncu-live-ratio coalescing_ratio -- ncu --csv --metrics "$m" "$BIN/coalescing"
  record ncu-live-ratio-raw coalescing_ratio -- ncu --csv --page raw --metrics "$m" "$BIN/coalescing"
}

# Library kernels under the sanitizers (cudawatch's flags: caching off), a
# real training step's initcheck cut by a timeout, and a torch.compile
# program under the flags a user types (--leak-check full, caching on).
library() {
  export SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1
  record plain library_kernels -- env CUDA_LAUNCH_BLOCKING=1 $PY "$SRC/library_kernels.py"
  RUN_TIMEOUT=150 sanitize library_kernels racecheck racecheck &
  RUN_TIMEOUT=150 sanitize library_kernels initcheck initcheck &
  RUN_TIMEOUT=100 sanitize library_kernels memcheck memcheck &
  RUN_TIMEOUT=40 PROGRAM=$ROOT/tests/gpu/real/resnet_step.py sanitize resnet_step initcheck initcheck-cut &
  SAN_ENV="" RUN_TIMEOUT=200 PROGRAM=$ROOT/tests/gpu/real/compiled_mlp.py \
    sanitize compiled_mlp memcheck memcheck-leakcheck-user --leak-check full &
  wait
}

# Is kernel-level recovery reliable on the planted corpus? memcheck with
# --destroy-on-device-error kernel on every planted memcheck case.
corpus_recover() {
  local gpu=$ROOT/tests/gpu
  for c in oob_read oob_write misaligned device_assert invalid_launch api_error hang_after_error; do
    nvcc -lineinfo -arch=sm_90 -o "$BIN/$c" "$gpu/$c.cu" >/dev/null 2>&1
    RUN_TIMEOUT=40 PROGRAM=$BIN/$c sanitize "corpus-$c" memcheck memcheck-recover \
      --destroy-on-device-error kernel &
  done
  SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 RUN_TIMEOUT=90 PROGRAM=$gpu/torch_index_oob.py \
    sanitize corpus-torch_index_oob memcheck memcheck-recover --destroy-on-device-error kernel &
  SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 RUN_TIMEOUT=90 PROGRAM=$gpu/triton_hidden_oob.py \
    sanitize corpus-triton_hidden_oob memcheck memcheck-recover --destroy-on-device-error kernel &
  wait
}

# ncu: a program with no kernels; library kernels with the launching call
# stacks (native and Python) and every page those can be read from.
ncu_runs() {
  ncu --help >"$OUTDIR/ncu-help.txt" 2>&1
  record ncu no_kernels -- ncu --target-processes all --clock-control none \
    --metrics "$NCU_METRICS" --section SourceCounters --import-source yes \
    -f -o "$OUTDIR/no_kernels/ncu" "$BIN/no_kernels"
  local stack=(--call-stack)
  grep -q -- --call-stack-type "$OUTDIR/ncu-help.txt" &&
    stack=(--call-stack --call-stack-type native --call-stack-type python)
  local d=$OUTDIR/library_kernels
  RUN_TIMEOUT=150 record ncu-stack library_kernels -- ncu --target-processes all \
    --clock-control none --metrics "$NCU_METRICS" --section SourceCounters \
    --filter-mode per-launch-config "${stack[@]}" -f -o "$d/ncu-stack" $PY "$SRC/library_kernels.py"
  if [ -f "$d/ncu-stack.ncu-rep" ]; then
    record ncu-stack-raw library_kernels -- ncu --import "$d/ncu-stack.ncu-rep" --csv --page raw --print-units base
    record ncu-stack-details library_kernels -- ncu --import "$d/ncu-stack.ncu-rep" --csv --page details \
      --print-units base --print-details all
    record ncu-stack-text library_kernels -- ncu --import "$d/ncu-stack.ncu-rep" --page details \
      --print-details all -c 3
    record ncu-stack-session library_kernels -- ncu --import "$d/ncu-stack.ncu-rep" --page session --csv
    rm -f "$d/ncu-stack.ncu-rep"
  fi
  # A C++ program's native call stack (nvcc -lineinfo -g for host lines).
  nvcc -lineinfo -g -arch=sm_90 -o "$BIN/coalescing" "$ROOT/tests/gpu/coalescing.cu" >/dev/null 2>&1
  d=$OUTDIR/coalescing_stack
  record ncu-stack coalescing_stack -- ncu --target-processes all --clock-control none \
    --metrics "$NCU_METRICS" --section SourceCounters --call-stack -f -o "$d/ncu-stack" "$BIN/coalescing"
  if [ -f "$d/ncu-stack.ncu-rep" ]; then
    record ncu-stack-raw coalescing_stack -- ncu --import "$d/ncu-stack.ncu-rep" --csv --page raw --print-units base
    record ncu-stack-details coalescing_stack -- ncu --import "$d/ncu-stack.ncu-rep" --csv --page details \
      --print-units base --print-details all
    rm -f "$d/ncu-stack.ncu-rep"
  fi
}

# Another process holds all but HOLD_FREE_MIB of the GPU: the sanitizers
# cannot track launches of kernels that need much memory (cuBLAS's nvjet).
# (A first try with a small MLP and 1 GiB free ran clean: it needs bigger
# matrices.)
hog() {
  local c=hog
  mkdir -p "$OUTDIR/$c"
  HOLD_FREE_MIB=${HOLD_FREE_MIB:-512} $PY "$SRC/hold_gpu.py" >"$OUTDIR/$c/hold_gpu.stdout" 2>&1 &
  local holder=$!
  for _ in $(seq 60); do grep -q holding "$OUTDIR/$c/hold_gpu.stdout" && break; sleep 1; done
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv >"$OUTDIR/$c/compute-apps.csv" 2>&1
  SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 RUN_TIMEOUT=60 PROGRAM=$SRC/big_matmul.py \
    sanitize hog synccheck synccheck
  SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 RUN_TIMEOUT=60 PROGRAM=$SRC/big_matmul.py \
    sanitize hog memcheck memcheck
  (cd "$ROOT/tests/gpu" && RUN_TIMEOUT=150 record cudawatch hog -- "$CW" --color never run \
    --out-dir "$OUTDIR/hog/run" --timeout 60 --stages plain,memcheck,synccheck --format json -- \
    $PY beyond/big_matmul.py)
  kill "$holder"
  wait "$holder"
}

# ncu's call stacks as its text prints them (the CSV pages carry none):
# the library-kernel program (Python stacks into cuBLAS, cuDNN, ATen) and
# the strided gather (a C++ host stack, -g), each profiled as the stage
# profiles (metrics and the lean section) plus --call-stack native and
# python, then imported as the details page with every detail, as text.
ncu_stack_text() {
  local metrics
  metrics=$(sed -n '/^pub const METRICS/,/";/p' "$ROOT/src/tools/ncu/argv.rs" |
    tr -d '\\\n' | sed 's/.*= *"//; s/";.*//; s/ //g')
  nvcc -lineinfo -g -arch=sm_90 -o "$BIN/coalescing-g" "$ROOT/tests/gpu/coalescing.cu" >/dev/null 2>&1
  local c program
  for c in library_kernels coalescing_stack; do
    program=$PY\ $SRC/library_kernels.py
    [ $c = coalescing_stack ] && program=$BIN/coalescing-g
    local d=$OUTDIR/$c
    mkdir -p "$d"
    # shellcheck disable=SC2086
    record ncu-stack-lean $c -- ncu --target-processes application-only --clock-control none \
      --metrics "$metrics" --section-folder "$ROOT/src/tools/ncu" --section CoalescingSource \
      --import-source yes --filter-mode per-launch-config --launch-count 1 \
      --call-stack --call-stack-type native --call-stack-type python \
      -f -o "$d/ncu-stack-lean" $program
    if [ -f "$d/ncu-stack-lean.ncu-rep" ]; then
      record ncu-stack-text $c -- ncu --import "$d/ncu-stack-lean.ncu-rep" --page details \
        --print-details all --print-units base
      record ncu-stack-raw-lean $c -- ncu --import "$d/ncu-stack-lean.ncu-rep" --csv --page raw \
        --print-units base
      rm -f "$d/ncu-stack-lean.ncu-rep"
    fi
  done
}

# A real bug program's uninitialised read inside ATen (tests/gpu/real/
# empty_then_reduce.py), under initcheck as the stage runs it (no host
# stacks): no Python frame says the user launched it. And its plain run.
empty_then_reduce() {
  local c=empty_then_reduce program=$ROOT/tests/gpu/real/empty_then_reduce.py
  record plain $c -- env CUDA_LAUNCH_BLOCKING=1 $PY "$program"
  SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 PROGRAM=$program \
    sanitize $c initcheck initcheck-device --show-backtrace device --destroy-on-device-error kernel
  # The initcheck stage's rerun with host stacks for its first records
  # (tools::sanitizer::host_stacks): the launching line of ATen's read.
  record initcheck-host $c -- env PYTORCH_NO_CUDA_MEMORY_CACHING=1 CUDAWATCH_STAGE=initcheck \
    compute-sanitizer --tool initcheck --xml --save "$OUTDIR/$c/initcheck-host.xml" \
    --print-limit 2000 --error-exitcode 86 --target-processes all \
    --destroy-on-device-error kernel $PY "$program"
  if [ -x "$CW" ]; then
    (cd "$ROOT/tests/gpu/real" && RUN_TIMEOUT=300 record cudawatch $c -- "$CW" --color never run \
      --out-dir "$OUTDIR/$c/run" --timeout 200 --format json -- $PY empty_then_reduce.py)
    # the run's report and stage records; initcheck's raw output is the
    # capture above
    find "$OUTDIR/$c/run" -type f ! -name report.json ! -name stage.json -delete
  fi
}

# empty_then_reduce's read under initcheck as the stage now runs a Python
# program, without any stack (`initcheck-none`), and `cudawatch run --stages
# plain,initcheck` of it (`stackless.report.json`): the stage's run, then
# the rerun with host stacks that names the launching line.
stackless_initcheck() {
  local c=empty_then_reduce program=$ROOT/tests/gpu/real/empty_then_reduce.py
  SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 PROGRAM=$program \
    sanitize $c initcheck initcheck-none --show-backtrace no --destroy-on-device-error kernel
  if [ -x "$CW" ]; then
    cudawatch_run $c stackless "$ROOT/tests/gpu/real" 200 --stages plain,initcheck -- \
      $PY empty_then_reduce.py
    find "$OUTDIR/$c/run-stackless" -type f ! -name report.json ! -name stage.json \
      ! -name 'host-stacks.*' ! -name 'initcheck.xml' ! -name stdout -delete
  fi
}

# Kernels of the user's named as NVIDIA's libraries name theirs, each
# with a shared-memory race (tests/gpu/beyond/tiled_gemm_race.cu:
# `tiled_gemm`; cutlass_style_race.cu: `cutlass::Kernel<TileSum>`, the
# user's operator in CUTLASS's wrapper): racecheck as the stage runs it
# under the toolkit's compute-sanitizer, and under NEW_SANITIZER (2026.4)
# with racecheck's library filter (as LIBRARY_KERNEL_NAMES in
# src/tools/sanitizer/launches.rs writes it), then `cudawatch run` by
# default from the project's root, built with and without -lineinfo. Is
# the race found, and whose does the report say it is?
LIBRARY_FILTER='(cudnn|cublas|cutlass|xmma|nvjet|fmha|splitKreduce|gemv2T_kernel|gemv2N_kernel|gemvNSP|gemmSN_|gemmk1_|cufft|nccl|(ampere|volta|turing|sm80|sm90|sm100)_[a-z0-9]*gemm)'
# ncu's default filter of PyTorch's own kernels, with the ncu stage's
# flags: a program whose every kernel is ATen's (all left out: "No kernels
# were profiled" and the kernels ncu saw) and a model with the user's Triton
# kernel beside cuBLAS's and ATen's, each with and without the filter; then
# `cudawatch run` of each, its defaults.
ncu_framework_filter() {
  local c=ncu_framework_filter real=$ROOT/tests/gpu/real
  local f='regex:^(?!(^_ZN2at6native|^_ZN2at4cuda|^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_))'
  local stage=(ncu --target-processes application-only --clock-control none
    --metrics "$NCU_METRICS" --section-folder "$ROOT/src/tools/ncu" --section CoalescingSource
    --import-source yes --call-stack --call-stack-type python
    --filter-mode per-launch-config --launch-count 1)
  local p
  for p in empty_then_reduce triton_tail_in_model; do
    record "ncu-$p" "$c" -- "${stage[@]}" --kernel-name-base mangled --kernel-name "$f" \
      -f -o "$OUTDIR/$c/$p" $PY "$real/$p.py"
    record "ncu-$p-unfiltered" "$c" -- "${stage[@]}" -f -o "$OUTDIR/$c/$p-all" $PY "$real/$p.py"
  done
  [ -x "$CW" ] || { echo "ncu-framework-filter needs $CW for its cudawatch runs" >&2; return; }
  for p in empty_then_reduce triton_tail_in_model; do
    cudawatch_run "$c" "cudawatch-$p" "$real" 300 -- $PY "$p.py"
  done
}

library_named() {
  local c flags=(-arch=sm_90 -std=c++17)
  for c in tiled_gemm_race cutlass_style_race; do
    mkdir -p "$OUTDIR/$c"
    cp "$SRC/$c.cu" "$OUTDIR/$c/"
    record build $c -- nvcc -lineinfo "${flags[@]}" -o "$BIN/$c" "$SRC/$c.cu"
    record build-nolineinfo $c -- nvcc "${flags[@]}" -o "$BIN/$c-nolineinfo" "$SRC/$c.cu"
    record plain $c -- env CUDA_LAUNCH_BLOCKING=1 "$BIN/$c"
    sanitize $c racecheck racecheck
    if [ -x "${NEW_SANITIZER:-}" ]; then
      record racecheck-libfilter $c -- "$NEW_SANITIZER" --tool racecheck --xml \
        --save "$OUTDIR/$c/racecheck-libfilter.xml" --print-limit 0 --error-exitcode 86 \
        --target-processes all --kernel-name-exclude "regex=$LIBRARY_FILTER" "$BIN/$c"
    fi
    record strings $c -- sh -c "strings -n 6 '$BIN/$c' | grep '^_Z' | sort -u"
    [ -x "$CW" ] || continue
    cudawatch_run $c cudawatch "$ROOT" 200 -- "$BIN/$c"
    cudawatch_run $c nolineinfo "$ROOT" 200 -- "$BIN/$c-nolineinfo"
    find "$OUTDIR/$c"/run-* -type f ! -name report.json ! -name stage.json ! -name run.json \
      ! -name 'racecheck.xml' ! -name 'synccheck.xml' ! -name stdout -delete
  done
}

# Reads of what a matrix product, convolution or attention wrote
# (tests/gpu/beyond/gemm_output_read.py CASE): initcheck as the stage runs
# it and as a user types it, and ncu as the stage runs it (which kernels
# wrote the memory). Does initcheck see every writer's stores?
gemm_reads() {
  local case c p
  for case in ${GEMM_CASES:-fp32 bf16 fp16 conv16 sdpa triton}; do
    c=gemm_$case p="$PY $SRC/gemm_output_read.py $case"
    (
      # shellcheck disable=SC2086
      record plain $c -- env CUDA_LAUNCH_BLOCKING=1 $p
      SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 PROGRAM=$p \
        sanitize $c initcheck initcheck-device --show-backtrace device --destroy-on-device-error kernel
      # shellcheck disable=SC2086
      record initcheck-user $c -- compute-sanitizer --tool initcheck $p
      # ncu as the stage runs it (cudawatch's own section, Python call
      # stacks), and every page the stage imports, each source page too.
      local sections=$OUTDIR/$c/.sections rep=$OUTDIR/$c/ncu.ncu-rep i
      mkdir -p "$sections" && cp "$ROOT/src/tools/ncu/CoalescingSource.section" "$sections/"
      # shellcheck disable=SC2086
      record ncu $c -- ncu --target-processes all --clock-control none --metrics "$NCU_METRICS" \
        --section-folder "$sections" --section CoalescingSource --import-source yes \
        --call-stack --call-stack-type python \
        --filter-mode per-launch-config --launch-count 1 -f -o "$OUTDIR/$c/ncu" $p
      if [ -f "$rep" ]; then
        record ncu-raw $c -- ncu --import "$rep" --csv --page raw --print-units base
        record ncu-details $c -- ncu --import "$rep" --csv --page details --print-units base
        record ncu-stack-text $c -- ncu --import "$rep" --page details --print-details all \
          --print-units base
        for i in 0 1 2 3 4 5 6 7; do
          record ncu-source-$i $c -- ncu --import "$rep" --csv --page source --print-source cuda,sass \
            --print-units base --launch-skip $i --launch-count 1
        done
        rm -rf "$rep" "$sections"
      fi
    ) &
  done
  wait
}

# The GPU almost full after the program's warm-up (tests/gpu/beyond/
# crowded_gpu.py: another process takes all but MARGIN_MIB once the
# program has its tensors and cuBLAS's workspace): the step fits plainly;
# does each sanitizer still find room for its own tracking?
crowded() {
  local c=crowded margin
  for margin in ${CROWDED_MARGINS:-96 48}; do
    record plain-$margin $c -- env MARGIN_MIB=$margin HOLDER=other \
      PYTORCH_NO_CUDA_MEMORY_CACHING=1 $PY "$SRC/crowded_gpu.py"
    for t in memcheck synccheck racecheck initcheck; do
      SAN_ENV="PYTORCH_NO_CUDA_MEMORY_CACHING=1 MARGIN_MIB=$margin HOLDER=other" RUN_TIMEOUT=90 \
        PROGRAM=$SRC/crowded_gpu.py sanitize $c "$t" "$t-$margin"
    done
  done
}

# initcheck as the stage now runs it, without host call stacks
# (`--show-backtrace device`), beside the full captures of the same
# programs: the planted uninitialised read, the unrolled one, and
# ResNet-18's flood (its XML kept gzipped).
host_stacks() {
  local gpu=$ROOT/tests/gpu
  nvcc -lineinfo -arch=sm_90 -o "$BIN/uninit_read" "$gpu/uninit_read.cu" >/dev/null 2>&1
  record build unrolled_uninit -- nvcc -lineinfo -arch=sm_90 -o "$BIN/unrolled_uninit" "$SRC/unrolled_uninit.cu"
  PROGRAM=$BIN/uninit_read sanitize host-stacks-uninit_read initcheck initcheck-device --show-backtrace device &
  PROGRAM=$BIN/uninit_read sanitize host-stacks-uninit_read initcheck initcheck &
  sanitize unrolled_uninit initcheck initcheck-device --show-backtrace device &
  SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 RUN_TIMEOUT=200 PROGRAM=$ROOT/tests/gpu/real/resnet_step.py \
    sanitize resnet_step initcheck initcheck-device --show-backtrace device &
  wait
  gzip -f "$OUTDIR/resnet_step/initcheck-device.xml"
  local f=$OUTDIR/resnet_step/initcheck-device.stdout
  [ -f "$f" ] && { tail -n 3 "$f" >"$OUTDIR/resnet_step/initcheck-device-summary.stdout"; rm -f "$f"; }
}

# racecheck told to check only some launches (`--launch-skip`,
# `--launch-count`), as a user might to make it cheaper: on ResNet-18's
# step the launches it does not check crash the program ("The Sanitizer
# failed to handle a hardware exception"), as leaving kernels out by name
# does; the MLP step skips every launch safely. And `cudawatch run` with
# a launch range, as the user would see it.
launch_ranges() {
  local c=launch_ranges resnet=$ROOT/tests/gpu/real/resnet_step.py mlp=$ROOT/tests/gpu/torch_train_clean.py
  local env=PYTORCH_NO_CUDA_MEMORY_CACHING=1 rec=(--destroy-on-device-error kernel)
  SAN_ENV=$env RUN_TIMEOUT=200 PROGRAM=$resnet sanitize $c racecheck racecheck-skip-all "${rec[@]}" \
    --launch-skip 100000 &
  SAN_ENV=$env RUN_TIMEOUT=200 PROGRAM=$resnet sanitize $c racecheck racecheck-first-64 "${rec[@]}" \
    --launch-count 64 &
  SAN_ENV=$env RUN_TIMEOUT=200 PROGRAM=$mlp sanitize $c racecheck racecheck-mlp-skip-all "${rec[@]}" \
    --launch-skip 100000 &
  wait
  record plain $c -- env CUDA_LAUNCH_BLOCKING=1 $PY "$resnet"
  RUN_TIMEOUT=200 record cudawatch $c -- "$CW" --color never run --out-dir "$OUTDIR/$c/run" \
    --stages plain,racecheck --sanitizer-launch-skip 138 --format json -- $PY "$resnet"
  # the run's report and the racecheck stage's record; its raw output is
  # the capture above
  find "$OUTDIR/$c/run" -type f ! -name report.json ! -name stage.json -delete
}

# initcheck told to skip launches, on a correct program whose first launch
# writes what the second reads (tests/gpu/beyond/fill_then_read.cu): as the
# stage runs it, whole and with the first launch skipped; and `cudawatch
# run` with `--sanitizer-launch-skip 1`.
unchecked_writes() {
  local c=fill_then_read rec=(--destroy-on-device-error kernel)
  record build $c -- nvcc -lineinfo -arch=sm_90 -o "$BIN/$c" "$SRC/$c.cu"
  record plain $c -- env CUDA_LAUNCH_BLOCKING=1 "$BIN/$c"
  sanitize $c initcheck initcheck-recover --show-backtrace device "${rec[@]}"
  sanitize $c initcheck initcheck-skip1 --show-backtrace device "${rec[@]}" --launch-skip 1
  record initcheck-user-skip1 $c -- compute-sanitizer --tool initcheck --launch-skip 1 "$BIN/$c"
  (cd "$SRC" && record cudawatch $c -- "$CW" --color never run --out-dir "$OUTDIR/$c/run" \
    --stages plain,initcheck --sanitizer-launch-skip 1 --format json -- "$BIN/$c")
  find "$OUTDIR/$c/run" -type f ! -name report.json ! -name stage.json -delete
}

# mps: the GPU shared through a private MPS control daemon (its own pipe
# and log folders, told to quit at the end; the GPU's compute mode is left
# as it is): the daemon's pipe folder; a CUDA program plainly, under ncu
# and under memcheck as MPS clients; ncu with CUDA_MPS_PIPE_DIRECTORY
# naming a folder with no daemon (the program outside MPS); then doctor and
# cudawatch's own runs of that program and of a PyTorch step under MPS.
mps() {
  local c=mps pipe=/tmp/cw-mps/pipe log=/tmp/cw-mps/log
  local prog=$BIN/coalescing py=$ROOT/tests/gpu/torch_train_clean.py
  mkdir -p "$pipe" "$log" "$OUTDIR/$c"
  nvcc -lineinfo -arch=sm_90 -o "$prog" "$ROOT/tests/gpu/coalescing.cu" >/dev/null 2>&1
  local ncu_flags=(--target-processes all --clock-control none --metrics "$NCU_METRICS"
    --section SourceCounters -f)
  CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$log nvidia-cuda-mps-control -d
  echo "daemon: exit $?, compute mode $(nvidia-smi --query-gpu=compute_mode --format=csv,noheader)" \
    >"$OUTDIR/$c/daemon.txt"
  (
    export CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$log
    record plain-client $c -- "$prog"
    ls -l "$pipe" | sed 's/^\(.\)[^ ]* *[0-9]* [^ ]* [^ ]* */\1 /' >"$OUTDIR/$c/pipe-listing.txt"
    record ncu-client $c -- ncu "${ncu_flags[@]}" -o "$OUTDIR/$c/ncu-client" "$prog"
    record ncu-outside $c -- env CUDA_MPS_PIPE_DIRECTORY=/tmp/cw-mps/no-daemon-here \
      ncu "${ncu_flags[@]}" -o "$OUTDIR/$c/ncu-outside" "$prog"
    PROGRAM=$prog sanitize $c memcheck memcheck-client
    if [ -x "$CW" ]; then
      record doctor $c -- "$CW" --color never doctor
      (cd "$ROOT/tests/gpu" && record cudawatch $c -- "$CW" --color never run \
        --out-dir "$OUTDIR/$c/run" --format json -- "$prog")
      (cd "$ROOT/tests/gpu" && RUN_TIMEOUT=300 record cudawatch-torch $c -- "$CW" --color never \
        run --out-dir "$OUTDIR/$c/run-torch" --format json -- $PY "$py")
    fi
    nvidia-smi >"$OUTDIR/$c/smi-after.txt" 2>&1
  )
  echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control
  cp "$log/control.log" "$OUTDIR/$c/control.log" 2>/dev/null
  rm -f "$OUTDIR/$c"/*.ncu-rep
}

# Today's binary on the programs whose verdicts the issue names.
# floods: the sanitizers without any backtrace (`--show-backtrace no`),
# kernel-level recovery as cudawatch runs them: ViT-tiny's step, whose
# initcheck and synccheck records flood (834k and 460k with backtraces, past
# 4 minutes), and planted programs, to see what a record keeps without its
# frames (file and line of a -lineinfo kernel, inlined frames).
floods() {
  local gpu=$ROOT/tests/gpu vit=$ROOT/tests/gpu/real/vit_tiny_step.py
  for c in uninit_read divergent_barrier oob_write; do
    nvcc -lineinfo -arch=sm_90 -o "$BIN/$c" "$gpu/$c.cu" >/dev/null 2>&1
  done
  record build unrolled_uninit -- nvcc -lineinfo -arch=sm_90 -o "$BIN/unrolled_uninit" "$SRC/unrolled_uninit.cu"
  local nobt=(--destroy-on-device-error kernel --show-backtrace no)
  SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 RUN_TIMEOUT=200 PROGRAM=$vit \
    sanitize vit_tiny_step initcheck initcheck-flood "${nobt[@]}" &
  SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 RUN_TIMEOUT=200 PROGRAM=$vit \
    sanitize vit_tiny_step synccheck synccheck-flood "${nobt[@]}" &
  PROGRAM=$BIN/uninit_read sanitize floods-uninit_read initcheck initcheck-flood "${nobt[@]}" &
  PROGRAM=$BIN/divergent_barrier sanitize floods-divergent_barrier synccheck synccheck-flood "${nobt[@]}" &
  PROGRAM=$BIN/oob_write sanitize floods-oob_write memcheck memcheck-flood "${nobt[@]}" &
  PROGRAM=$BIN/oob_write sanitize floods-oob_write memcheck memcheck-recover --destroy-on-device-error kernel &
  sanitize unrolled_uninit initcheck initcheck-flood "${nobt[@]}" &
  wait
  gzip -f "$OUTDIR"/vit_tiny_step/*-flood.xml
  local f
  for f in "$OUTDIR"/vit_tiny_step/*-flood.stdout; do
    [ -f "$f" ] && { tail -n 40 "$f" >"${f%.stdout}-tail.stdout"; rm -f "$f"; }
  done
}

# sweep-variance: the same nightly sweep three nights running (ViT-tiny's
# step under the plain run and racecheck, each night
# compared with the last line of the history): racecheck does not see the
# same hazards inside cuDNN every run, so the comparison must not call the
# library's sites new or fixed one by one. Keeps each night's stderr, its
# Markdown and JSON reports and the history; the run directories go.
sweep_variance() {
  local c=sweep_variance
  [ -x "$CW" ] || { echo "sweep-variance needs $CW" >&2; return; }
  mkdir -p "$OUTDIR/$c"
  cat >"$OUTDIR/$c/sweep.toml" <<TOML
[defaults]
workdir = "$ROOT"
stages = ["plain", "racecheck"]
stage-timeout = 300
timeout = 600

[[target]]
name = "vit_tiny_step"
command = ["$PY", "tests/gpu/real/vit_tiny_step.py"]
TOML
  local n
  for n in 1 2 3; do
    local base=()
    [ "$n" -gt 1 ] && base=(--baseline "$OUTDIR/$c/history.jsonl")
    RUN_TIMEOUT=400 record "night-$n" $c -- "$CW" --color never sweep "$OUTDIR/$c/sweep.toml" \
      --out-dir "$OUTDIR/$c/sweep-$n" --history "$OUTDIR/$c/history.jsonl" "${base[@]}" \
      --report "markdown=$OUTDIR/$c/night-$n.md"
    cp "$OUTDIR/$c/sweep-$n/report.json" "$OUTDIR/$c/night-$n.report.json" 2>/dev/null
    rm -rf "$OUTDIR/$c/sweep-$n"
  done
}

# stage_ncu_run CASE NAME PROGRAM...: `cudawatch run --stages plain,ncu` of
# PROGRAM, keeping the stage's raw page, ncu's console and the JSON report
# as stage-NAME-* in OUTDIR/CASE (the run directory goes).
stage_ncu_run() {
  local c=$1 name=$2 d=$OUTDIR/$1
  shift 2
  [ -x "$CW" ] || return 0
  RUN_TIMEOUT=200 record "cudawatch-$name" "$c" -- "$CW" --color never run --stages plain,ncu \
    --out-dir "$d/run-$name" --format json -- "$@"
  cp "$d/run-$name/ncu/raw.csv" "$d/stage-$name-raw.csv" 2>/dev/null
  cp "$d/run-$name/ncu/stdout" "$d/stage-$name-ncu.stdout" 2>/dev/null
  cp "$d/run-$name/ncu/stderr" "$d/stage-$name-ncu.stderr" 2>/dev/null
  cp "$d/cudawatch-$name.stdout" "$d/stage-$name.report.json" 2>/dev/null
  rm -rf "$d/run-$name"
}

# What ncu's "bytes used" counter sees of loads that are not plain LDG:
# tests/gpu/beyond/async_loads.cu (an LDG copy, a cp.async copy, a
# broadcast load) and an fp32 matrix product (cuBLAS's multistage GEMM),
# each profiled as the ncu stage profiles it (`cudawatch run --stages
# plain,ncu`: its raw page and report kept) and with the stage's metrics
# plus the cp.async (LDGSTS) counters ncu has on this GPU, raw page in
# base units.
async_loads() {
  local c=async_loads d=$OUTDIR/async_loads
  mkdir -p "$d"
  record build $c -- nvcc -lineinfo -arch=sm_90 -o "$BIN/$c" "$SRC/$c.cu"
  # The matmul program is kept beside its capture.
  cp "$SRC/matmul_f32.py" "$d/matmul.py"
  ncu --query-metrics --chip gh100 >"$d/query-metrics.txt" 2>&1
  local extra="" m
  for m in l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts:sum \
    l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts:sum \
    smsp__sass_inst_executed_op_ldgsts:sum smsp__sass_inst_executed_op_global_ld:sum \
    smsp__sass_data_bytes_mem_global_op_ld:sum smsp__sass_sectors_mem_global_op_ld:sum \
    smsp__sass_data_bytes_mem_global_op_ldgsts:sum smsp__sass_sectors_mem_global_op_ldgsts:sum; do
    grep -q "^${m%%:*} " "$d/query-metrics.txt" && extra="$extra,${m%%:*}.${m##*:}"
  done
  echo "${extra#,}" >"$d/extra-metrics.txt"
  local prog name
  for name in async_loads matmul; do
    case $name in
      async_loads) prog=("$BIN/$c") ;;
      matmul) prog=($PY "$d/matmul.py") ;;
    esac
    stage_ncu_run $c "$name" "${prog[@]}"
    RUN_TIMEOUT=200 record "ncu-$name" $c -- ncu --target-processes all --clock-control none \
      --metrics "$NCU_METRICS$extra" --filter-mode per-launch-config --launch-count 1 \
      -f -o "$d/ncu-$name" "${prog[@]}"
    if [ -f "$d/ncu-$name.ncu-rep" ]; then
      record "ncu-$name-raw" $c -- ncu --import "$d/ncu-$name.ncu-rep" --csv --page raw --print-units base
      rm -f "$d/ncu-$name.ncu-rep"
    fi
  done
  grep -iE "ldgsts|sass_data_bytes_mem_global|sass_sectors_mem_global" "$d/query-metrics.txt" \
    >"$d/ldgsts-metrics.txt"
  rm -f "$d/query-metrics.txt"
}

# What ncu prints when a profiled launch faults: a PyTorch embedding with an
# index past its table (a device assert in ATen's gather) and the planted
# device assert and misaligned access (C++), each under `cudawatch run
# --stages plain,ncu` (the stage's console log and raw page kept) and under
# a user's plain `ncu --csv` (live page).
faulting_launch() {
  local c=faulting_launch d=$OUTDIR/faulting_launch
  mkdir -p "$d"
  local gpu=$ROOT/tests/gpu name prog
  for name in device_assert misaligned; do
    record "build-$name" $c -- nvcc -lineinfo -arch=sm_90 -o "$BIN/$name" "$gpu/$name.cu"
  done
  for name in embedding_bad_index device_assert misaligned; do
    case $name in
      embedding_bad_index) prog=($PY "$gpu/real/embedding_bad_index.py") ;;
      *) prog=("$BIN/$name") ;;
    esac
    stage_ncu_run $c "$name" "${prog[@]}"
    RUN_TIMEOUT=200 record "ncu-live-$name" $c -- ncu --csv --metrics "$NCU_METRICS" "${prog[@]}"
  done
}

# Launching lines for racecheck's records, which carry no host stack: the
# planted shared-memory race (C++) and a user's load_inline extension with
# one (Python), each under `cudawatch run --stages plain,racecheck,ncu`,
# kept in the layout the fake tools replay (plain.*, racecheck.*, ncu.stdout,
# ncu-raw/-details/-stack-text.stdout) with the run's report.json.
race_launch_lines() {
  [ -x "$CW" ] || { echo "race-launch-lines needs $CW" >&2; return; }
  local name prog gpu=$ROOT/tests/gpu
  record build race_smem -- nvcc -lineinfo -arch=sm_90 -o "$BIN/smem_race" "$gpu/smem_race.cu"
  for name in race_smem race_extension; do
    case $name in
      race_smem) prog=("$BIN/smem_race") ;;
      race_extension) prog=($PY "$gpu/real/user_kernel_race.py") ;;
    esac
    local d=$OUTDIR/$name r=$OUTDIR/$name/run
    RUN_TIMEOUT=300 record cudawatch $name -- "$CW" --color never run --stages plain,racecheck,ncu \
      --out-dir "$r" --format json -- "${prog[@]}"
    for t in plain racecheck; do
      cp "$r/$t/stdout" "$d/$t.stdout"
      cp "$r/$t/stderr" "$d/$t.stderr"
      python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["end"]; print(e.get("code", 1))' \
        "$r/$t/stage.json" >"$d/$t.exit"
    done
    cp "$r/racecheck/racecheck.xml" "$d/racecheck.xml"
    cp "$r/ncu/stdout" "$d/ncu.stdout"
    cp "$r/ncu/raw.csv" "$d/ncu-raw.stdout"
    cp "$r/ncu/details.csv" "$d/ncu-details.stdout"
    cat "$r"/ncu/stacks*.txt >"$d/ncu-stack-text.stdout"
    cp "$r/report.json" "$d/report.json"
    rm -rf "$r"
  done
}

# A CI job's pytest run of the real corpus's pytest suites: the bug suite's
# plain run (CUDA_LAUNCH_BLOCKING=1) in each traceback style a user may
# pick, then cudawatch's plain and csan stages on the stream-race suite and
# every stage but ncu on the bug suite under pytest-xdist, and a suite whose
# tests fail with no CUDA error (tests/gpu/beyond/pytest_failures/), and
# the correct suite's plain and ncu stages, each kept in the
# fakes' replay layout (plain.*, csan.*) with its report.
pytest_formats() {
  [ -x "$CW" ] || { echo "pytest-formats needs $CW" >&2; return; }
  local suites=$ROOT/tests/gpu/real variant
  for variant in default tb-short tb-native tb-line quiet xdist; do
    local flags=()
    case $variant in
      tb-short) flags=(--tb=short) ;;
      tb-native) flags=(--tb=native) ;;
      tb-line) flags=(--tb=line) ;;
      quiet) flags=(-q) ;;
      xdist) flags=(-n 2) ;;
    esac
    (cd "$suites/pytest_embedding" &&
      record plain "pytest_formats/$variant" -- env CUDA_LAUNCH_BLOCKING=1 $PY -m pytest "${flags[@]}") &
  done
  # The same failures in unittest's report (Python's tracebacks, one per
  # failed test), from tests/gpu/beyond/unittest_suite/.
  for variant in lookup failures; do
    (cd "$SRC/unittest_suite" &&
      record plain "unittest/$variant" -- env CUDA_LAUNCH_BLOCKING=1 $PY -m unittest "test_${variant}_unittest") &
  done
  local name stages flags
  for name in pytest_stream_race pytest_embedding_xdist pytest_failures pytest_model_ok; do
    local suite=$suites/${name%_xdist}
    case $name in
      pytest_model_ok) stages=plain,ncu; flags=() ;;
      pytest_stream_race) stages=plain,csan; flags=() ;;
      pytest_embedding_xdist) stages=plain,memcheck,racecheck,csan,memory; flags=(-n 2) ;;
      pytest_failures) stages=plain,memcheck,csan; flags=(); suite=$SRC/pytest_failures ;;
    esac
    (
      local d=$OUTDIR/$name r=$OUTDIR/$name/run t
      cd "$suite" &&
        RUN_TIMEOUT=300 record cudawatch $name -- "$CW" --color never run --stages $stages \
          --out-dir "$r" --format json -- $PY -m pytest "${flags[@]}"
      for t in ${stages//,/ }; do
        cp "$r/$t/stdout" "$d/$t.stdout"
        cp "$r/$t/stderr" "$d/$t.stderr"
        python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["end"]; print(e.get("code", 1))' \
          "$r/$t/stage.json" >"$d/$t.exit"
        [ -f "$r/$t/$t.xml" ] && cp "$r/$t/$t.xml" "$d/$t.xml"
      done
      if [ -f "$r/ncu/raw.csv" ]; then
        cp "$r/ncu/raw.csv" "$d/ncu-raw.stdout"
        cp "$r/ncu/details.csv" "$d/ncu-details.stdout"
        cat "$r"/ncu/stacks*.txt >"$d/ncu-stack-text.stdout"
        for f in "$r"/ncu/source-*.csv; do
          [ -f "$f" ] && cp "$f" "$d/ncu-$(basename "$f" .csv).stdout"
        done
      fi
      cp "$r/report.json" "$d/report.json"
      rm -rf "$r"
    ) &
  done
  wait
}

# A DDP program's rendezvous port, taken (tests/gpu/real/ddp_step.py):
# with a listener holding the port its script sets (29512) or torchrun's
# default (29500), the plain run and memcheck fail to listen on it, as each
# of cudawatch's stages at once did before each had a port of its own; then
# `cudawatch run` of both launch styles with default settings.
ddp_ports() {
  local real=$ROOT/tests/gpu/real d=$OUTDIR/ddp_ports port holders=()
  mkdir -p "$d"
  for port in 29512 29500; do
    $PY -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(150)' $port &
    holders+=($!)
  done
  sleep 1
  (
    cd "$real" || exit
    record plain-spawn ddp_ports -- env CUDA_LAUNCH_BLOCKING=1 $PY ddp_step.py &
    record plain-torchrun ddp_ports -- env CUDA_LAUNCH_BLOCKING=1 torchrun --nproc_per_node=1 ddp_step.py &
    record memcheck ddp_ports -- compute-sanitizer --tool memcheck --xml --save "$d/memcheck.xml" \
      --print-limit 0 --error-exitcode 86 --target-processes all $PY ddp_step.py &
    wait
  )
  kill "${holders[@]}" 2>/dev/null
  wait
  [ -x "$CW" ] || { echo "ddp-ports needs $CW for its cudawatch runs" >&2; return; }
  cudawatch_run ddp_ports cudawatch-spawn "$real" 400 --timeout 200 -- $PY ddp_step.py
  cudawatch_run ddp_ports cudawatch-torchrun "$real" 400 --timeout 200 -- \
    torchrun --nproc_per_node=1 ddp_step.py
  rm -rf "$d"/run-cudawatch-*
}

# keep_tails RUN DEST SUFFIX BYTES TOOL...: the last BYTES of each named
# stage's stdout and stderr in the run directory RUN, as
# DEST/<tool>SUFFIX.stdout and .stderr (the run directory itself is too
# large to keep). A phase that keeps the plain stage's tail records the
# program run alone as `program`, not `plain`, which the tail would
# overwrite.
keep_tails() {
  local run=$1 dest=$2 suffix=$3 bytes=$4 t
  shift 4
  for t in "$@"; do
    [ -f "$run/$t/stdout" ] && tail -c "$bytes" "$run/$t/stdout" >"$dest/$t$suffix.stdout"
    [ -f "$run/$t/stderr" ] && tail -c "$bytes" "$run/$t/stderr" >"$dest/$t$suffix.stderr"
  done
}

# Programs whose work runs in several processes or in CUDA graphs, under
# `cudawatch run` with default settings: the correct pytest suite under
# pytest-xdist (two workers, each with its own optimizer steps) and an MLP
# compiled into CUDA graphs (tests/gpu/beyond/compiled_cudagraphs.py).
many_processes() {
  [ -x "$CW" ] || { echo "many-processes needs $CW" >&2; return; }
  local d=$OUTDIR/many_processes
  mkdir -p "$d"
  cudawatch_run many_processes cudawatch-xdist "$ROOT/tests/gpu/real/pytest_model_ok" 400 \
    --timeout 240 -- $PY -m pytest -n 2 &
  cudawatch_run many_processes cudawatch-cudagraphs "$SRC" 400 --timeout 240 -- \
    $PY compiled_cudagraphs.py &
  # The graphs with PyTorch's caching allocator off, as the sanitizer
  # stages run programs, without a sanitizer.
  (cd "$SRC" && record plain-nocache-cudagraphs many_processes -- \
    env PYTORCH_NO_CUDA_MEMORY_CACHING=1 $PY compiled_cudagraphs.py) &
  wait
  local r
  for r in xdist cudagraphs; do
    local run=$d/run-cudawatch-$r
    [ -f "$run/memory/steps.jsonl" ] && cp "$run/memory/steps.jsonl" "$d/memory-$r.steps.jsonl"
    keep_tails "$run" "$d" "-$r" 20000 memcheck ncu
    # A stage whose first try failed for want of the caching allocator:
    # that try, in the fakes' replay layout (memcheck-nocache.*).
    local first=$run/cudagraphs/memcheck
    if [ -d "$first" ]; then
      cp "$first/stdout" "$d/memcheck-nocache.stdout"
      cp "$first/stderr" "$d/memcheck-nocache.stderr"
      [ -f "$first/memcheck.xml" ] && cp "$first/memcheck.xml" "$d/memcheck-nocache.xml"
      python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["end"]; print(e.get("code", 1))' \
        "$first/stage.json" >"$d/memcheck-nocache.exit"
    fi
    rm -rf "$run"
  done
}

# Why Inductor's CUDA graphs fail under memcheck, racecheck, synccheck and
# ncu but not under initcheck (which runs with `--show-backtrace device`):
# the graphs with PyTorch's caching allocator on, under each tool with
# and without host call stacks (Python frames among them), all at once.
cudagraph_stacks() {
  local c=cudagraph_stacks
  mkdir -p "$OUTDIR/$c"
  cp "$SRC/compiled_cudagraphs.py" "$OUTDIR/$c/"
  compute-sanitizer --help >"$OUTDIR/$c/compute-sanitizer-help.txt" 2>&1
  ncu --help >"$OUTDIR/$c/ncu-help.txt" 2>&1
  local p=$SRC/compiled_cudagraphs.py
  # Inductor compiles once into its cache, so the variants below time the
  # tools, not the compiler.
  record plain "$c" -- $PY "$p"
  RUN_TIMEOUT=300
  (PROGRAM=$p sanitize "$c" memcheck memcheck) &
  (PROGRAM=$p sanitize "$c" memcheck memcheck-device --show-backtrace device) &
  (PROGRAM=$p sanitize "$c" memcheck memcheck-host --show-backtrace host) &
  (PROGRAM=$p sanitize "$c" memcheck memcheck-none --show-backtrace no) &
  (PROGRAM=$p sanitize "$c" racecheck racecheck) &
  (PROGRAM=$p sanitize "$c" racecheck racecheck-device --show-backtrace device) &
  (PROGRAM=$p sanitize "$c" synccheck synccheck-device --show-backtrace device --destroy-on-device-error kernel) &
  (PROGRAM=$p sanitize "$c" initcheck initcheck-host --show-backtrace yes) &
  wait
  local m=(--target-processes all --metrics "$NCU_METRICS")
  (record ncu-python "$c" -- ncu "${m[@]}" --call-stack --call-stack-type python $PY "$p") &
  (record ncu-native "$c" -- ncu "${m[@]}" --call-stack --call-stack-type native $PY "$p") &
  (record ncu-nostack "$c" -- ncu "${m[@]}" $PY "$p") &
  wait
  # ncu printed each launch's metrics (up to 10,000 lines): its own lines
  # and the program's are what is read; the metric tables go.
  local f
  for f in "$OUTDIR/$c"/ncu-*.stdout; do
    grep -v -e '^ ' -e '^$' "$f" >"$f.kept"
    mv "$f.kept" "$f"
  done
}

# CUDA graphs made by hand: a PyTorch training step captured with
# torch.cuda.graph (tests/gpu/real/cudagraph_step.py) (plainly, with the caching allocator off as the
# sanitizer stages run Python, and under `cudawatch run`), and a CUDA
# program whose kernel, launched by cudaGraphLaunch, writes past its buffer.
manual_graphs() {
  [ -x "$CW" ] || { echo "manual-graphs needs $CW" >&2; return; }
  local d=$OUTDIR/manual_graphs
  mkdir -p "$d"
  local step=$ROOT/tests/gpu/real/cudagraph_step.py
  cp "$step" "$SRC/graph_oob.cu" "$d/"
  record build manual_graphs -- nvcc -lineinfo -arch=sm_90 -o "$BIN/graph_oob" "$SRC/graph_oob.cu"
  record plain manual_graphs -- $PY "$step"
  record plain-nocache manual_graphs -- env PYTORCH_NO_CUDA_MEMORY_CACHING=1 $PY "$step"
  (PROGRAM="$BIN/graph_oob" sanitize manual_graphs memcheck memcheck-graph_oob) &
  (PROGRAM="$step" SAN_ENV=PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
    sanitize manual_graphs memcheck memcheck-nocache) &
  wait
  local r
  for r in cudagraph_step graph_oob; do
    local prog=("$PY" "$step")
    [ "$r" = graph_oob ] && prog=("$BIN/graph_oob")
    cudawatch_run manual_graphs "cudawatch-$r" "$SRC" 400 --timeout 240 -- "${prog[@]}"
    local run=$d/run-cudawatch-$r
    keep_tails "$run" "$d" "-$r" 20000 memcheck racecheck csan ncu
    [ -d "$run/cudagraphs" ] && ls -R "$run/cudagraphs" >"$d/cudagraphs-$r.txt"
    rm -rf "$run"
  done
}

# A loop kernel-level recovery keeps alive (tests/gpu/beyond/retry_until_done.cu):
# plainly; memcheck as a user runs it (the first error ends it) and with
# kernel-level recovery for LOOP_LIMIT seconds (what the fake replays);
# `cudawatch run --stages plain,memcheck` (the repeat watch).
retry_loop() {
  local d=$OUTDIR/retry_loop
  mkdir -p "$d"
  cp "$SRC/retry_until_done.cu" "$d/"
  record build retry_loop -- nvcc -lineinfo -arch=sm_90 -o "$BIN/retry_until_done" "$SRC/retry_until_done.cu"
  record plain retry_loop -- "$BIN/retry_until_done"
  PROGRAM="$BIN/retry_until_done" sanitize retry_loop memcheck memcheck-user
  RUN_TIMEOUT=${LOOP_LIMIT:-8} PROGRAM="$BIN/retry_until_done" \
    sanitize retry_loop memcheck memcheck-recover --destroy-on-device-error kernel
  # Only its first 500 records are kept, whole (the fake repeats them).
  awk 'n < 500 { print } /^========= $/ { n++ }' "$d/memcheck-recover.stdout" \
    >"$d/memcheck-recover.head" && mv "$d/memcheck-recover.head" "$d/memcheck-recover.stdout"
  # Stopped by its limit, the tool leaves no XML.
  rm -f "$d/memcheck-recover.xml"
  [ -x "$CW" ] || { echo "retry-loop's cudawatch run needs $CW" >&2; return; }
  cudawatch_run retry_loop cudawatch "$BIN" 200 --stages plain,memcheck --timeout 150 \
    -- "$BIN/retry_until_done"
  keep_tails "$d/run-cudawatch" "$d" "" 4000 plain memcheck
  ls -R "$d/run-cudawatch" >"$d/run-cudawatch.txt"
  rm -rf "$d/run-cudawatch"
}

# --racecheck-blocks first through cudawatch: how the machines' 2025.3.1
# refuses `--racecheck-filter-cluster-id` (the tool's own words, and the
# stage's), and with a compute-sanitizer 2026.3 or newer (NEW_SANITIZER,
# carried to the machine: PyPI's nvidia-cuda-sanitizer-api) ResNet-18's step
# and the planted race of tests/gpu/real/user_kernel_race.py, block 0 only.
racecheck_blocks() {
  [ -x "$CW" ] || { echo "racecheck-blocks needs $CW" >&2; return; }
  local d=$OUTDIR/racecheck_blocks real=$ROOT/tests/gpu/real
  mkdir -p "$d"
  record refusal racecheck_blocks -- compute-sanitizer --tool racecheck \
    --racecheck-filter-cluster-id 0 --error-exitcode 86 $PY -c "print(1)"
  cudawatch_run racecheck_blocks cudawatch-refused "$real" 200 --stages plain,racecheck \
    --racecheck-blocks first --timeout 150 -- $PY resnet_step.py
  keep_tails "$d/run-cudawatch-refused" "$d" "-refused" 4000 racecheck
  rm -rf "$d/run-cudawatch-refused"
  [ -x "${NEW_SANITIZER:-}" ] || { echo "racecheck-blocks: no NEW_SANITIZER" >&2; return; }
  local new=(--compute-sanitizer "$NEW_SANITIZER" --stages plain,racecheck --timeout 200)
  cudawatch_run racecheck_blocks cudawatch-resnet-first "$real" 300 "${new[@]}" \
    --racecheck-blocks first -- $PY resnet_step.py
  cudawatch_run racecheck_blocks cudawatch-race-first "$real" 300 "${new[@]}" \
    --racecheck-blocks first -- $PY user_kernel_race.py
  rm -rf "$d"/run-cudawatch-*
}

# racecheck's indirect barrier tracking: tests/gpu/beyond/barrier_chain.cu
# (a correct write and read ordered only through a third warp's two
# barriers) under racecheck as the stage runs it and with the tracking off
# (NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING=0, the manual's
# switch for where it "might severely impact performance").
indirect_barriers() {
  local d=$OUTDIR/indirect_barriers
  mkdir -p "$d"
  cp "$SRC/barrier_chain.cu" "$d/"
  record build indirect_barriers -- nvcc -lineinfo -arch=sm_90 -std=c++17 \
    -o "$BIN/barrier_chain" "$SRC/barrier_chain.cu"
  record plain indirect_barriers -- "$BIN/barrier_chain"
  local cs=(compute-sanitizer --tool racecheck --error-exitcode 86 --target-processes all)
  record racecheck indirect_barriers -- "${cs[@]}" "$BIN/barrier_chain"
  record racecheck-no-indirect indirect_barriers -- \
    env NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING=0 "${cs[@]}" "$BIN/barrier_chain"
}

# --steps: a training script of 2000 optimizer steps
# (tests/gpu/beyond/long_training.py) plainly, under `cudawatch run`
# with default settings and `--steps 3`, and under the plain run and
# memcheck without it (a stage limit of STEPS_LIMIT seconds: how far a
# sanitizer gets through the whole script).
steps() {
  [ -x "$CW" ] || { echo "steps needs $CW" >&2; return; }
  local d=$OUTDIR/steps
  mkdir -p "$d"
  cp "$SRC/long_training.py" "$d/"
  record plain steps -- $PY "$SRC/long_training.py"
  local r
  for r in steps3 whole; do
    local flags=(--steps 3)
    [ "$r" = whole ] && flags=(--stages plain,memcheck --timeout "${STEPS_LIMIT:-150}")
    cudawatch_run steps "cudawatch-$r" "$SRC" 400 "${flags[@]}" -- $PY long_training.py
    keep_tails "$d/run-cudawatch-$r" "$d" "-$r" 4000 plain memcheck racecheck csan ncu
    rm -rf "$d/run-cudawatch-$r"
  done
}

# cudnn.benchmark = True (tests/gpu/beyond/cudnn_benchmark_step.py): cuDNN
# times every candidate algorithm on first use. Plainly, then `cudawatch
# run` with default settings and BENCH_LIMIT seconds per stage: each
# stage's time and outcome, and ncu's launches.
cudnn_benchmark() {
  [ -x "$CW" ] || { echo "cudnn-benchmark needs $CW" >&2; return; }
  local d=$OUTDIR/cudnn_benchmark
  mkdir -p "$d"
  cp "$SRC/cudnn_benchmark_step.py" "$d/"
  record plain cudnn_benchmark -- $PY "$SRC/cudnn_benchmark_step.py"
  cudawatch_run cudnn_benchmark cudawatch "$SRC" 560 --timeout "${BENCH_LIMIT:-300}" -- \
    $PY cudnn_benchmark_step.py
  keep_tails "$d/run-cudawatch" "$d" "" 4000 memcheck racecheck initcheck synccheck ncu
  rm -rf "$d/run-cudawatch"
}

# torch.compile under CSAN (tests/gpu/beyond/compile_csan.py, a race
# between a side stream's write and a compiled function's read): the
# program plainly, with TORCH_CUDA_SANITIZER=1 alone (no cudawatch), and
# `cudawatch run --stages plain,csan`. Each prints Dynamo's counters and
# Inductor's kernel count: whether the compiled code ran under CSAN.
compile_csan() {
  local d=$OUTDIR/compile_csan
  mkdir -p "$d"
  cp "$SRC/compile_csan.py" "$d/"
  record plain compile_csan -- $PY "$SRC/compile_csan.py"
  record csan-raw compile_csan -- env TORCH_CUDA_SANITIZER=1 $PY "$SRC/compile_csan.py"
  if [ -x "$CW" ]; then
    cudawatch_run compile_csan cudawatch "$SRC" 120 --stages plain,csan -- $PY compile_csan.py
    keep_tails "$d/run-cudawatch" "$d" "" 8000 csan
    [ -f "$d/run-cudawatch/csan/hook.json" ] && cp "$d/run-cudawatch/csan/hook.json" "$d/csan.hook.json"
    rm -rf "$d/run-cudawatch"
  fi
}

# Hugging Face's Trainer (tests/gpu/real/hf_trainer.py, eight bf16 steps of
# a small GPT-2): plainly, then `cudawatch run` with default settings;
# initcheck's text and XML (a flood's stackless run) kept as their first
# record per kernel (scripts/lib/first_records.py).
hf_trainer() {
  [ -x "$CW" ] || { echo "hf-trainer needs $CW" >&2; return; }
  local d=$OUTDIR/hf_trainer real=$ROOT/tests/gpu/real
  mkdir -p "$d"
  cp "$real/hf_trainer.py" "$d/"
  record program hf_trainer -- $PY "$real/hf_trainer.py"
  cudawatch_run hf_trainer cudawatch "$real" 560 --timeout "${BENCH_LIMIT:-240}" -- $PY hf_trainer.py
  keep_tails "$d/run-cudawatch" "$d" "" 8000 plain memcheck racecheck initcheck synccheck csan memory ncu
  local f
  for f in stdout initcheck.xml; do
    [ -f "$d/run-cudawatch/initcheck/$f" ] && $PY "$ROOT/scripts/lib/first_records.py" \
      "$d/run-cudawatch/initcheck/$f" "$d/initcheck-first-per-kernel.${f##*.}"
  done
  rm -rf "$d/run-cudawatch"
}

# Two DDP ranks on one GPU (tests/gpu/beyond/two_ranks.py, gloo): with
# LEAK=1 rank 1 keeps each step's loss with its graph, rank 0 holds more
# but stays flat; LEAK=0 both flat. Plainly, then `cudawatch run --stages
# plain,memory` of each, keeping the memory stage's steps.jsonl and
# peaks.jsonl (each rank's lines).
two_ranks() {
  [ -x "$CW" ] || { echo "two-ranks needs $CW" >&2; return; }
  local leak c
  for leak in 1 0; do
    c=two_ranks_leak$leak
    mkdir -p "$OUTDIR/$c"
    # The program once, beside the first case.
    [ "$leak" = 1 ] && cp "$SRC/two_ranks.py" "$OUTDIR/$c/"
    LEAK=$leak record plain "$c" -- $PY "$SRC/two_ranks.py"
    LEAK=$leak cudawatch_run "$c" cudawatch "$SRC" 300 --stages plain,memory -- $PY two_ranks.py
    cp "$OUTDIR/$c/run-cudawatch/memory/"{steps,peaks}.jsonl "$OUTDIR/$c/" 2>/dev/null
    cp "$OUTDIR/$c/run-cudawatch/memory/hook.json" "$OUTDIR/$c/memory.hook.json" 2>/dev/null
    rm -rf "$OUTDIR/$c/run-cudawatch"
  done
}

# `--steps` in a program without an optimizer
# (tests/gpu/beyond/long_inference.py, 600 batches of a ResNet-18
# evaluated): plainly, then `cudawatch run --steps 3` with default
# settings; and Hugging Face's Trainer (tests/gpu/real/hf_trainer.py,
# optimizer steps through accelerate) with `--steps 2`.
inference_steps() {
  [ -x "$CW" ] || { echo "inference-steps needs $CW" >&2; return; }
  local d=$OUTDIR/long_inference
  mkdir -p "$d" "$OUTDIR/hf_trainer_steps"
  cp "$SRC/long_inference.py" "$d/"
  record program long_inference -- $PY "$SRC/long_inference.py"
  cudawatch_run long_inference cudawatch "$SRC" 560 --steps 3 --timeout 240 -- $PY long_inference.py
  keep_tails "$d/run-cudawatch" "$d" "" 4000 plain memcheck racecheck initcheck synccheck csan memory ncu
  rm -rf "$d/run-cudawatch"
  cudawatch_run hf_trainer_steps cudawatch "$ROOT/tests/gpu/real" 560 --steps 2 --timeout 240 -- \
    $PY hf_trainer.py
  keep_tails "$OUTDIR/hf_trainer_steps/run-cudawatch" "$OUTDIR/hf_trainer_steps" "" 4000 plain csan memory
  rm -rf "$OUTDIR/hf_trainer_steps/run-cudawatch"
}

# More of `--steps` without an optimizer: Hugging Face's `generate`
# (tests/gpu/beyond/long_generation.py, a model call per token) under
# plain and memcheck, and a torch.compile'd model
# (tests/gpu/beyond/compiled_inference.py) plainly and under the plain
# stage, each printing Dynamo's counters (the hooks must not break its
# graph).
generation_steps() {
  [ -x "$CW" ] || { echo "generation-steps needs $CW" >&2; return; }
  local c
  for c in long_generation compiled_inference; do
    mkdir -p "$OUTDIR/$c"
    cp "$SRC/$c.py" "$OUTDIR/$c/"
    record program "$c" -- $PY "$SRC/$c.py"
  done
  cudawatch_run long_generation cudawatch "$SRC" 300 --stages plain,memcheck --steps 3 -- \
    $PY long_generation.py
  cudawatch_run compiled_inference cudawatch "$SRC" 300 --stages plain --steps 3 -- \
    $PY compiled_inference.py
  for c in long_generation compiled_inference; do
    keep_tails "$OUTDIR/$c/run-cudawatch" "$OUTDIR/$c" "" 4000 plain memcheck
    rm -rf "$OUTDIR/$c/run-cudawatch"
  done
}

# JAX programs: a small training step (tests/gpu/real/jax_step.py) under
# compute-sanitizer and ncu as a user runs them (memcheck dies of SIGSEGV),
# and with XLA's autotuner off or no preallocation; the Pallas kernel that
# accumulates into an output nobody zeroed
# (tests/gpu/real/jax_pallas_accumulate.py) plainly and under initcheck
# with XLA's pool (preallocated) and without it. Phase `jax-cudawatch`:
# `cudawatch run` of each, the Pallas kernel buggy and fixed.
jax_record() {
  # A tool that dies of SIGSEGV leaves its JAX program running, holding
  # the GPU memory XLA preallocated: each run's leftovers go before the next.
  record "$@"
  pkill -9 -f 'jax_step.py|jax_pallas_accumulate.py'
  sleep 2
}

jax_programs() {
  local c=jax_step real=$ROOT/tests/gpu/real
  mkdir -p "$OUTDIR/$c" "$OUTDIR/jax_pallas_accumulate"
  $PY -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__)' \
    >"$OUTDIR/$c/jax-version.txt" 2>&1
  cp "$real/$c.py" "$OUTDIR/$c/"
  jax_record program $c -- $PY "$real/$c.py"
  jax_record memcheck-user $c -- compute-sanitizer --tool memcheck $PY "$real/$c.py"
  jax_record memcheck-no-prealloc $c -- env XLA_PYTHON_CLIENT_PREALLOCATE=false \
    compute-sanitizer --tool memcheck $PY "$real/$c.py"
  jax_record memcheck-autotune-off $c -- env XLA_FLAGS=--xla_gpu_autotune_level=0 \
    compute-sanitizer --tool memcheck $PY "$real/$c.py"
  jax_record memcheck-both $c -- env XLA_FLAGS=--xla_gpu_autotune_level=0 \
    XLA_PYTHON_CLIENT_PREALLOCATE=false compute-sanitizer --tool memcheck $PY "$real/$c.py"
  jax_record ncu-user $c -- ncu --metrics gpu__time_duration.sum $PY "$real/$c.py"
  c=jax_pallas_accumulate
  cp "$real/$c.py" "$OUTDIR/$c/"
  jax_record program $c -- $PY "$real/$c.py"
  jax_record initcheck-user $c -- compute-sanitizer --tool initcheck $PY "$real/$c.py"
  jax_record initcheck-platform $c -- env XLA_PYTHON_CLIENT_ALLOCATOR=platform \
    XLA_PYTHON_CLIENT_PREALLOCATE=false compute-sanitizer --tool initcheck $PY "$real/$c.py"
  jax_trim
}

# What is worth committing of the JAX captures: ncu's text for ~1,900
# autotuning launches cut to its ends and counted, initcheck's printed
# records to the first per kernel; the run directories without ncu's
# binary report and cudawatch's hook, the Pallas run's host-stack rerun to
# its first records.
jax_trim() {
  local f=$OUTDIR/jax_step/ncu-user.stdout r
  if [ -f "$f" ] && [ ! -f "$OUTDIR/jax_step/ncu-user.launches" ]; then
    grep -c 'Section: Command line profiler metrics' "$f" >"$OUTDIR/jax_step/ncu-user.launches"
    { head -n 120 "$f"; echo "[... cut by capture-beyond.sh: ncu-user.launches counts them ...]"
      tail -n 40 "$f"; } >"$f.cut" && mv "$f.cut" "$f"
  fi
  for f in "$OUTDIR"/jax_pallas_accumulate/initcheck-{user,platform}.stdout \
    "$OUTDIR"/jax_pallas_accumulate/run-cudawatch/initcheck/host-stacks.{stdout,xml}; do
    [ -f "$f" ] || continue
    $PY "$ROOT/scripts/lib/first_records.py" "$f" "$f.first" && mv "$f.first" "$f"
  done
  # ncu's binary report, and cudawatch's own hook as the run wrote it out.
  rm -rf "$OUTDIR"/jax_*/run-*/ncu/profile.ncu-rep "$OUTDIR"/jax_*/run-*/hook
}

# A JAX program that runs out of GPU memory (tests/gpu/beyond/jax_oom.py):
# plainly, then `cudawatch run --stages plain,memcheck`.
jax_oom() {
  [ -x "$CW" ] || { echo "jax-oom needs $CW" >&2; return; }
  local c=jax_oom
  mkdir -p "$OUTDIR/$c"
  cp "$SRC/$c.py" "$OUTDIR/$c/"
  jax_record program $c -- $PY "$SRC/$c.py"
  cudawatch_run $c cudawatch "$SRC" 300 --stages plain,memcheck --timeout 120 -- $PY $c.py
  rm -rf "$OUTDIR/$c/run-cudawatch/hook"
}

jax_cudawatch() {
  [ -x "$CW" ] || { echo "jax-cudawatch needs $CW" >&2; return; }
  mkdir -p "$OUTDIR/jax_step" "$OUTDIR/jax_pallas_accumulate"
  local c=jax_pallas_accumulate real=$ROOT/tests/gpu/real
  cudawatch_run jax_step cudawatch "$real" 500 --timeout 240 -- $PY jax_step.py
  cudawatch_run $c cudawatch "$real" 400 --timeout 240 -- $PY $c.py
  FIXED=1 cudawatch_run $c cudawatch-fixed "$real" 400 --timeout 240 -- $PY $c.py
  jax_trim
}

cudawatch_runs() {
  for c in no_kernels alloc_probe; do
    (cd "$SRC" && RUN_TIMEOUT=150 record cudawatch "$c" -- "$CW" --color never run \
      --out-dir "$OUTDIR/$c/run" --timeout 60 --format json -- "$BIN/$c")
  done
}

# Keeps what is worth committing of the runs too large for the repository:
# the first line and the last 400 of the cut initcheck text (its last
# record is the one the timeout cut), the summary of the library kernels'
# 200 MB initcheck; the ncu details page (2 MB, no call stacks), run
# directories and the large twins of gemm_reads go.
trim() {
  local f=$OUTDIR/resnet_step/initcheck-cut.stdout
  if [ -f "$f" ]; then
    { head -n 1 "$f"; tail -n 400 "$f"; } >"$OUTDIR/resnet_step/initcheck-cut-tail.stdout"
    wc -c <"$f" >"$OUTDIR/resnet_step/initcheck-cut.bytes"
    rm -f "$f"
  fi
  f=$OUTDIR/library_kernels/initcheck.stdout
  if [ -f "$f" ]; then
    tail -n 3 "$f" >"$OUTDIR/library_kernels/initcheck-summary.stdout"
    rm -f "$f" "$OUTDIR/library_kernels/initcheck.xml"
  fi
  rm -f "$OUTDIR/library_kernels/ncu-stack-details.stdout"
  rm -rf "$OUTDIR"/*/run
  # The attention case's 33 MB XML and the fp16 case (bf16's twin): their
  # counts are in ERROR SUMMARY of the user-flag runs, which stay.
  for c in gemm_sdpa gemm_fp16; do
    rm -f "$OUTDIR/$c/initcheck-device.xml" "$OUTDIR/$c/initcheck-device.stdout"
  done
}


phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(programs library corpus-recover ncu two_bugs launch-signs ncu-live hog cudawatch)
# The machine's record, once, unless only trimming what is there.
case "${phases[*]}" in trim | jax-trim) ;; *) environment ;; esac
for p in "${phases[@]}"; do
  start=$(date +%s)
  case $p in
    programs) programs ;;
    library) library ;;
    corpus-recover) corpus_recover ;;
    ncu) ncu_runs ;;
    hog) hog ;;
    crowded) crowded ;;
    empty_then_reduce) empty_then_reduce ;;
    gemm_reads) gemm_reads ;;
    ncu-stack-text) ncu_stack_text ;;
    two_bugs) two_bugs ;;
    launch-signs) launch_signs ;;
    ncu-live) ncu_live ;;
    trim) trim ;;
    cudawatch) cudawatch_runs ;;
    host-stacks) host_stacks ;;
    floods) floods ;;
    launch-ranges) launch_ranges ;;
    unchecked-writes) unchecked_writes ;;
    mps) mps ;;
    sweep-variance) sweep_variance ;;
    async-loads) async_loads ;;
    faulting-launch) faulting_launch ;;
    race-launch-lines) race_launch_lines ;;
    pytest-formats) pytest_formats ;;
    ddp-ports) ddp_ports ;;
    many-processes) many_processes ;;
    cudagraph-stacks) cudagraph_stacks ;;
    manual-graphs) manual_graphs ;;
    retry-loop) retry_loop ;;
    racecheck-blocks) racecheck_blocks ;;
    indirect-barriers) indirect_barriers ;;
    stackless-initcheck) stackless_initcheck ;;
    library-named) library_named ;;
    ncu-framework-filter) ncu_framework_filter ;;
    steps) steps ;;
    cudnn-benchmark) cudnn_benchmark ;;
    compile-csan) compile_csan ;;
    hf-trainer) hf_trainer ;;
    two-ranks) two_ranks ;;
    inference-steps) inference_steps ;;
    generation-steps) generation_steps ;;
    jax) jax_programs ;;
    jax-cudawatch) jax_cudawatch ;;
    jax-trim) jax_trim ;;
    jax-oom) jax_oom ;;
    *) echo "unknown phase $p" >&2 ;;
  esac
  echo "phase $p: $(($(date +%s) - start)) s" | tee -a "$OUTDIR/phases.txt"
done
echo "captured into $OUTDIR"
