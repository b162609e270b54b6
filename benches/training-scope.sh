#!/usr/bin/env bash
# What an ordinary training script costs each tool when only its first
# steps are checked, and which racecheck scope keeps the check in minutes
# (issue 57), on the GPU machine, with the tools alone (no cudawatch). The
# program is stopped after its first STEPS optimizer steps by cudawatch's
# own hook (src/tools/hook/sitecustomize.py, CUDAWATCH_STOP_AFTER_STEPS),
# as the stages stop it.
#
#   smoke     every tests/gpu/real/train_*.py for 3 steps at once: that each
#             runs (and the planted bugs fail), with its output.
#   unchecked racecheck on resnet_step.py with nothing checked
#             (`--launch-skip 100000`), PyTorch's caching allocator off (as
#             the stages ran it when it crashed) and on: is the crash of
#             unchecked cuDNN launches the allocator's?
#   hostapi   initcheck as the stage runs it on TRAIN_PROGRAM's first 2
#             steps, its "Host API" records cut out of the text; and, with
#             NEW_SANITIZER (2026.4), the same with no kernel checked
#             (filtered kernels' stores still tracked) and full host stacks,
#             so that each Host API record names its Python line.
#   racecheck racecheck on TRAIN_PROGRAM's first STEPS steps ALONE, one
#             variant after another (RACE_SCOPES): `stage` as the stage runs
#             it; `libs-out` with the caching allocator on and library
#             kernels (cuDNN, cuBLAS, CUTLASS, ...) left out by name;
#             `new-libs-out` the same under NEW_SANITIZER; `new-block0`
#             NEW_SANITIZER with only block 0 of each launch analysed.
#             Seconds, exit, the tool's summary, whether the program
#             crashed, and the kernels of its records.
#   floods    initcheck and synccheck on FLOOD_PROGRAMS (real programs'
#             first 2 steps, and the planted uninit_read.cu and
#             divergent_barrier.cu), one variant after another: `tk` the
#             toolkit's tool without stacks (the stage's flood rerun);
#             `new` NEW_SANITIZER the same; `new-libs` NEW_SANITIZER with
#             library kernels left out by the stage's own filter
#             (src/tools/sanitizer/launches.rs) and their stores tracked;
#             `new-libs-dev` the same with device stacks (the stage's first
#             try). Does 2026.4 see what Hopper's library kernels write, and
#             what does leaving library kernels out save? (issue 57)
#
# Usage: benches/training-scope.sh OUTDIR [smoke] [unchecked] [hostapi] [racecheck] [floods]
#   TRAIN_PROGRAM (tests/gpu/real/train_resnet.py), STEPS (1),
#   NEW_SANITIZER (a compute-sanitizer 2026.4 from PyPI's
#   nvidia-cuda-sanitizer-api, unpacked, never committed)
set -uo pipefail
OUTDIR=$(mkdir -p "${1:?usage: training-scope.sh OUTDIR [phase...]}" && cd "$1" && pwd)
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH=$PATH:/usr/local/cuda/bin
PY=${PY:-python3}
REAL=$ROOT/tests/gpu/real
TRAIN=${TRAIN_PROGRAM:-$REAL/train_resnet.py}
# Library kernels by (mangled) name, as src/judge/owner.rs knows them.
LIBS='regex=(cudnn|cublas|cutlass|xmma|nvjet|gemm|gemv|winograd|fprop|dgrad|wgrad|bn_fw_|bn_bw_|fmha|flash_|splitKreduce|curand|nccl|cub::|thrust)'
CS=(compute-sanitizer --error-exitcode 86 --target-processes all --print-limit 0)

# hooked STEPS CMD...: CMD with the program stopped after STEPS optimizer
# steps by cudawatch's hook (its facts in $OUTDIR/hook-N).
hooked() {
  local steps=$1 dir
  shift
  dir=$(mktemp -d "$OUTDIR/hook-XXXX")
  env PYTHONPATH="$ROOT/src/tools/hook" CUDAWATCH_HOOK_OUT="$dir" \
    CUDAWATCH_STOP_AFTER_STEPS="$steps" CUDAWATCH_CUDNN_BENCHMARK_OFF=1 "$@"
}
export -f hooked
export OUTDIR ROOT

# timed NAME CMD...: CMD's output in NAME.txt, its seconds and exit after.
timed() {
  local name=$1 start end code
  shift
  start=$(date +%s.%N)
  timeout "${LIMIT:-240}" bash -c '"$@"' _ "$@" >"$OUTDIR/$name.txt" 2>&1 </dev/null
  code=$?
  end=$(date +%s.%N)
  printf '%-14s %7.1f s  exit %3d  %s%s\n' "$name" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$code" \
    "$(grep -a -o 'ERROR SUMMARY.*\|RACECHECK SUMMARY.*' "$OUTDIR/$name.txt" | tail -1)" \
    "$(grep -a -q 'Internal Sanitizer Error\|illegal memory access' "$OUTDIR/$name.txt" && echo '  CRASHED')" |
    tee -a "$OUTDIR/summary.txt"
}

smoke() {
  local p pids=()
  for p in "$REAL"/train_*.py; do
    (cd "$REAL" && timed "smoke-$(basename "$p" .py)" hooked 3 $PY "$p") &
    pids+=($!)
  done
  wait "${pids[@]}"
}

unchecked() {
  (cd "$REAL" && timed unchecked-off env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${CS[@]}" \
    --tool racecheck --launch-skip 100000 $PY resnet_step.py) &
  local a=$!
  (cd "$REAL" && timed unchecked-on "${CS[@]}" --tool racecheck --launch-skip 100000 \
    $PY resnet_step.py) &
  wait $a $!
}

hostapi() {
  (cd "$REAL" && hooked 2 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 "${CS[@]}" \
    --tool initcheck --show-backtrace device $PY "$TRAIN" 2>&1 |
    tee >(tail -c 4000 >"$OUTDIR/hostapi-stage.tail") |
    grep -a -A30 'Host API' | head -c 400000 >"$OUTDIR/hostapi-stage.txt") &
  local a=$! b=
  if [ -x "${NEW_SANITIZER:-}" ]; then
    (cd "$REAL" && hooked 2 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 "$NEW_SANITIZER" \
      --error-exitcode 86 --target-processes all --print-limit 200 --tool initcheck \
      --kernel-name kns=cudawatch_checks_no_kernel --initcheck-track-filtered-global-memory yes \
      --xml --save "$OUTDIR/hostapi-new.xml" $PY "$TRAIN" >"$OUTDIR/hostapi-new.txt" 2>&1) &
    b=$!
  fi
  wait $a $b
  grep -a -c 'Host API' "$OUTDIR/hostapi-stage.txt" "$OUTDIR/hostapi-new.txt" | tee -a "$OUTDIR/summary.txt"
  tail -3 "$OUTDIR/hostapi-stage.tail" "$OUTDIR/hostapi-new.txt" | tee -a "$OUTDIR/summary.txt"
}

racecheck() {
  local v scopes
  read -ra scopes <<<"${RACE_SCOPES:-stage libs-out new-libs-out new-block0}"
  cd "$REAL" || return
  for v in "${scopes[@]}"; do
    case $v in
      stage) timed "race-$v" hooked "${STEPS:-1}" env PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
        "${CS[@]}" --tool racecheck --xml --save "$OUTDIR/race-$v.xml" $PY "$TRAIN" ;;
      libs-out) timed "race-$v" hooked "${STEPS:-1}" "${CS[@]}" --tool racecheck \
        --kernel-name-exclude "$LIBS" --xml --save "$OUTDIR/race-$v.xml" $PY "$TRAIN" ;;
      new-libs-out) [ -x "${NEW_SANITIZER:-}" ] && timed "race-$v" hooked "${STEPS:-1}" \
        "$NEW_SANITIZER" --error-exitcode 86 --target-processes all --print-limit 0 \
        --tool racecheck --kernel-name-exclude "$LIBS" --xml --save "$OUTDIR/race-$v.xml" $PY "$TRAIN" ;;
      new-block0) [ -x "${NEW_SANITIZER:-}" ] && timed "race-$v" hooked "${STEPS:-1}" \
        env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$NEW_SANITIZER" --error-exitcode 86 \
        --target-processes all --print-limit 0 --tool racecheck --racecheck-filter-cluster-id 0 \
        --xml --save "$OUTDIR/race-$v.xml" $PY "$TRAIN" ;;
      *) echo "unknown scope $v" >&2 ;;
    esac
    grep -o '<func>[^<]*</func>' "$OUTDIR/race-$v.xml" 2>/dev/null | sed 's/<[/]*func>//g' |
      cut -c1-90 | sort | uniq -c | sort -rn | head -4 | sed 's/^/        /' | tee -a "$OUTDIR/summary.txt"
  done
}

# The stage's library filter, as src/tools/sanitizer/launches.rs writes it.
STAGE_LIBS='regex=(cudnn|cublas|cutlass|xmma|nvjet|fmha|splitKreduce|gemv2T_kernel|gemv2N_kernel|gemvNSP|gemmSN_|gemmk1_|cufft|nccl|(ampere|volta|turing|sm80|sm90|sm100)_[a-z0-9]*gemm)'

# flood_variant TOOL VARIANT NAME STEPS CMD...: CMD (a program) under TOOL's
# VARIANT, a Python program stopped by the hook after STEPS steps (0: whole).
flood_variant() {
  local tool=$1 v=$2 name=$3 steps=$4 cs=compute-sanitizer extra=() hook=()
  shift 4
  [ "$steps" -gt 0 ] && hook=(hooked "$steps")
  case $v in
    tk) extra=(--show-backtrace no) ;;
    new) cs=$NEW_SANITIZER; extra=(--show-backtrace no) ;;
    new-libs) cs=$NEW_SANITIZER; extra=(--show-backtrace no --kernel-name-exclude "$STAGE_LIBS") ;;
    new-libs-dev) cs=$NEW_SANITIZER; extra=(--show-backtrace device --kernel-name-exclude "$STAGE_LIBS") ;;
  esac
  [ "$tool" = initcheck ] && [[ $v == new-libs* ]] && extra+=(--initcheck-track-filtered-global-memory yes)
  timed "$tool-$v-$name" "${hook[@]}" env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$cs" --error-exitcode 86 \
    --target-processes all --print-limit 0 --destroy-on-device-error kernel --tool "$tool" \
    "${extra[@]}" --xml --save "$OUTDIR/$tool-$v-$name.xml" "$@"
  printf '        %s duplicate-entry records, kernels:\n' \
    "$(grep -a -c 'Duplicate entry' "$OUTDIR/$tool-$v-$name.txt")" | tee -a "$OUTDIR/summary.txt"
  grep -a -o '<func>[^<]*</func>' "$OUTDIR/$tool-$v-$name.xml" 2>/dev/null | sed 's/<[/]*func>//g' |
    cut -c1-90 | sort | uniq -c | sort -rn | head -5 | sed 's/^/        /' | tee -a "$OUTDIR/summary.txt"
  # The XML of a flood is hundreds of megabytes: its kernels are counted.
  rm -f "$OUTDIR/$tool-$v-$name.xml"
  head -c 200000 "$OUTDIR/$tool-$v-$name.txt" >"$OUTDIR/t" && mv "$OUTDIR/t" "$OUTDIR/$tool-$v-$name.txt"
}

floods() {
  local p name v planted=$OUTDIR/planted
  [ -x "${NEW_SANITIZER:-}" ] || { echo "floods: NEW_SANITIZER is needed" >&2; return; }
  mkdir -p "$planted"
  nvcc -lineinfo -arch=sm_90 -o "$planted/uninit_read" "$ROOT/tests/gpu/uninit_read.cu"
  nvcc -lineinfo -arch=sm_90 -o "$planted/divergent_barrier" "$ROOT/tests/gpu/divergent_barrier.cu"
  for p in ${FLOOD_PROGRAMS:-vit_tiny_step resnet_step empty_then_reduce uninit_read divergent_barrier}; do
    for v in ${FLOOD_VARIANTS:-tk new new-libs new-libs-dev}; do
      case $p in
        uninit_read) flood_variant initcheck "$v" "$p" 0 "$planted/$p" ;;
        divergent_barrier) flood_variant synccheck "$v" "$p" 0 "$planted/$p" ;;
        *) (cd "$REAL" && flood_variant initcheck "$v" "$p" 2 $PY "$p.py")
           (cd "$REAL" && flood_variant synccheck "$v" "$p" 2 $PY "$p.py") ;;
      esac
    done
  done
}

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" |
  tee "$OUTDIR/summary.txt"
for phase in "${@:-smoke unchecked hostapi racecheck}"; do
  for p in $phase; do "$p"; done
done
