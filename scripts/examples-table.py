"""Writes the table of docs/examples/README.md from the run reports there.

Usage: python3 scripts/examples-table.py   (after copying a gpu-e2e.sh run in)
"""
import json
import os

PLANTED = {
    "oob_read": "out-of-bounds global read (oob_read.cu:7)",
    "oob_write": "out-of-bounds global write (oob_write.cu:6)",
    "misaligned": "misaligned int store (misaligned.cu:6)",
    "smem_race": "shared-memory race (smem_race.cu:7/9)",
    "uninit_read": "uninitialised read (uninit_read.cu:6)",
    "leak": "2 leaked allocations (leak.cu:10-11)",
    "device_assert": "failing device assert (device_assert.cu:7)",
    "invalid_launch": "2048 threads per block (invalid_launch.cu:15)",
    "api_error": "cudaMemcpy into freed memory (api_error.cu:9)",
    "divergent_barrier": "__syncthreads in divergent code (divergent_barrier.cu:8)",
    "coalescing": "stride-32 gather (coalescing.cu:12)",
    "no_kernel_image": "built for sm_100 only",
    "clean": "none",
    "torch_index_oob": "index 10 into 10 elements (torch_index_oob.py:10)",
    "torch_oom": "4 TiB allocation (torch_oom.py:7)",
    "triton_hidden_oob": "unmasked Triton store past a 100-float tensor (triton_hidden_oob.py:14)",
    "cupy_cublas_error": "SGEMM with lda < m (cupy_cublas_error.py:16)",
    "torch_train_clean": "none",
}
HERE = os.path.join(os.path.dirname(__file__), "..", "docs", "examples")


def main():
    exits = dict(line.split(" exit=") for line in open(os.path.join(HERE, "exits.txt")).read().split("\n") if line)
    rows = []
    for case, bug in PLANTED.items():
        report = json.load(open(os.path.join(HERE, f"{case}.report.json")))
        stages = ", ".join(f"{s['tool']}: {s['outcome']}" for s in report["stages"])
        found = []
        for site in report["findings"]:
            loc = site.get("location")
            item = f"{site['tool']} {site['kind']}" + (f" @ {os.path.basename(loc['file'])}:{loc['line']}" if loc else "")
            if item not in found:
                found.append(item)
        shown = "; ".join(found[:4]) + (f" (+{len(found) - 4})" if len(found) > 4 else "")
        rows.append(f"| `{case}` | {bug} | {exits.get(case, '?')} | {shown or 'nothing'} | {stages} |")
    readme = os.path.join(HERE, "README.md")
    text = open(readme).read()
    head, rest = text.split("| program | planted bug |", 1)
    tail = rest[rest.index("\n\n"):]
    table = "| program | planted bug | exit | what cudawatch found (tool kind @ site) | stages |\n| --- | --- | --- | --- | --- |\n"
    open(readme, "w").write(head + table + "\n".join(rows) + tail)


if __name__ == "__main__":
    main()
