#!/usr/bin/env bash
# How often compute-sanitizer dies of SIGSEGV under a JAX program, and which
# XLA setting stops it, on the GPU machine: per variant, six memchecks of
# tests/gpu/real/jax_step.py at once (the load of stages side by side),
# each with the settings cudawatch's sanitizer stages give XLA (no
# preallocation, the platform allocator, the autotuner off) plus the
# variant's flag; prints each run's exit status and the count of 139s.
# Outputs go to $OUT/<variant>-<i>.out.
#
# Usage: benches/jax-sanitizer-crashes.sh   (ROUNDS="1 2": rounds of every
#   variant; NOCMDBUF=0 leaves out the command-buffer variant)
# Measured 2026-11-25 on the H100 (compute-sanitizer 2025.3.1, jax 0.11.2):
# base 9 of 18 died, one compile thread 0 of 18, command buffers off 2 of 6
# (docs/tool-surprises.md).
export PATH=$PATH:/usr/local/cuda/bin
cd tests/gpu/real
v() {
  local name=$1 flags=$2 pids=() i rc crashed=0
  for i in 1 2 3 4 5 6; do
    XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_FLAGS="$flags" \
      setsid timeout -k 5 90 compute-sanitizer --tool memcheck --target-processes all python3 jax_step.py >"$OUT/$name-$i.out" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait $p; rc=$?; [ $rc -eq 139 ] && crashed=$((crashed+1)); echo -n "$rc " ; done
  pkill -9 -f jax_step.py; sleep 2
  echo " <- $name: $crashed of 6 died of SIGSEGV"
}
for round in ${ROUNDS:-1}; do
  v base$round "--xla_gpu_autotune_level=0"
  v onecompile$round "--xla_gpu_autotune_level=0 --xla_gpu_force_compilation_parallelism=1"
  [ "${NOCMDBUF:-1}" = 1 ] && v nocmdbuf$round "--xla_gpu_autotune_level=0 --xla_gpu_enable_command_buffer="
done
