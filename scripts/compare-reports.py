#!/usr/bin/env python3
"""Compares two runs of one program, as issue 23 asks of stages run at
once against one at a time: the same stage outcomes, the same sites (by
id; a count that differs is said, not failed: racecheck counts hazards as
it happens to observe them) and the same profiled kernels. Times, sampled
memory and pinned GPUs may differ.

Usage: scripts/compare-reports.py RUN_DIR_A RUN_DIR_B   (prints one line;
exit 1 when they differ)
"""
import json
import sys


def facts(run_dir):
    report = json.load(open(f"{run_dir}/report.json"))
    outcomes = {s["tool"]: s["outcome"] for s in report["stages"]}
    sites = {}
    for f in report.get("findings", []):
        sites[f["id"]] = sites.get(f["id"], 0) + f.get("count", 1)
    kernels = sorted(k.get("kernel", "") for k in report.get("coalescing", []))
    return outcomes, sites, kernels


def main():
    a_out, a_sites, a_k = facts(sys.argv[1])
    b_out, b_sites, b_k = facts(sys.argv[2])
    problems = []
    for tool in sorted(set(a_out) | set(b_out)):
        if a_out.get(tool) != b_out.get(tool):
            problems.append(f"{tool}: {a_out.get(tool)} vs {b_out.get(tool)}")
    counts = []
    for site in sorted(set(a_sites) | set(b_sites)):
        if site not in a_sites or site not in b_sites:
            problems.append(f"site {site}: {a_sites.get(site)} vs {b_sites.get(site)}")
        elif a_sites[site] != b_sites[site]:
            # racecheck reports hazards as it observes them: two runs of
            # one program can count a site's hazards differently.
            counts.append(f"{site} {a_sites[site]} vs {b_sites[site]}")
    if a_k != b_k:
        problems.append(f"coalescing kernels: {len(a_k)} vs {len(b_k)}")
    if problems:
        print("DIFFER: " + "; ".join(problems[:10]))
        sys.exit(1)
    note = f" (counts differ: {'; '.join(counts)})" if counts else ""
    print(f"same: {len(a_out)} stage outcomes, {len(a_sites)} sites, {len(a_k)} profiled kernels{note}")


if __name__ == "__main__":
    main()
