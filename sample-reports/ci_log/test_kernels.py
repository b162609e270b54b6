"""A test suite as a CI job runs it: each test runs a CUDA program under
compute-sanitizer and prints what the tool printed (pytest -s), so the
sanitizer's lines are interleaved with pytest's in the job log."""
import os
import subprocess

BIN = os.environ.get("CUDAWATCH_TEST_BIN", ".")


def sanitize(program, *flags):
    out = subprocess.run(
        ["compute-sanitizer", "--tool", "memcheck", *flags, os.path.join(BIN, program)],
        capture_output=True, text=True,
    )
    print(out.stdout, end="")
    print(out.stderr, end="")
    return out.returncode


def test_oob_write_is_clean():
    assert sanitize("oob_write") == 0


def test_leak_is_clean():
    assert sanitize("leak", "--leak-check", "full") == 0
