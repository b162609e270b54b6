#!/usr/bin/env bash
# Runs tests/gpu/ci/test_kernels.py with pytest -s in DIR, as a CI job
# would, and prefixes each line with a timestamp as GitHub Actions' log
# does (2026-11-22T17:00:00.1234567Z ...). Used by capture-samples.sh.
# Usage: ci-job-log.sh DIR BIN
set -u
cd "$1" || exit 1
export CUDAWATCH_TEST_BIN=$2
"${PYTHON:-python3}" -m pytest -s -v test_kernels.py 2>&1 |
  while IFS= read -r line; do
    printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%7NZ)" "$line"
  done
