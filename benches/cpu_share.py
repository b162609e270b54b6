#!/usr/bin/env python3
"""Which stage of a full check used how much CPU: runs a command (a
`cudawatch run`), samples /proc every half second for the command's
process tree, and prints, per stage (each child of cudawatch with its
descendants), the CPU seconds (user + system) it used and its wall time,
and the machine's cores for scale. The numbers behind "who starves whom"
when seven stages share one GPU host (docs/benchmarks.md).

Usage: benches/cpu_share.py OUT.json -- COMMAND...
Linux only (reads /proc). A process that lives less than half a second
may be missed; its CPU time is then counted nowhere.
"""
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def snapshot():
    """pid -> (ppid, cpu seconds, argv, environment keys of interest)."""
    seen = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            # The command name may hold spaces and parentheses: split after the last ')'.
            fields = stat[stat.rindex(")") + 2 :].split()
            ppid, utime, stime = int(fields[1]), int(fields[11]), int(fields[12])
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except (OSError, ValueError, IndexError):
            continue
        seen[int(name)] = (ppid, (utime + stime) / TICK, argv)
    return seen


def stage_of(argv):
    """A readable label for a direct child of cudawatch."""
    if not argv:
        return "?"
    exe = os.path.basename(argv[0])
    if exe == "compute-sanitizer" or "compute-sanitizer" in argv[0]:
        return argv[argv.index("--tool") + 1] if "--tool" in argv else "memcheck"
    if exe.startswith("ncu") or "/ncu" in argv[0]:
        return "ncu-import" if "-i" in argv or "--import" in argv else "ncu"
    return exe


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: cpu_share.py OUT.json -- COMMAND...")
    out, command = sys.argv[1], sys.argv[3:]
    start = time.time()
    child = subprocess.Popen(command)
    procs = {}  # pid -> dict(ppid, cpu, argv, first, last)
    while True:
        now = time.time() - start
        for pid, (ppid, cpu, argv) in snapshot().items():
            p = procs.get(pid)
            if p is None or p["argv"] != argv and p["cpu"] > cpu:
                # A new process, or a reused pid.
                procs[pid] = {"ppid": ppid, "cpu": cpu, "argv": argv, "first": now, "last": now}
            else:
                p.update(cpu=max(p["cpu"], cpu), last=now, argv=argv or p["argv"])
        if child.poll() is not None:
            break
        time.sleep(0.5)
    wall = time.time() - start
    # Each process's stage: its ancestor that is a direct child of the command.
    def stage_root(pid):
        chain = []
        while pid in procs and procs[pid]["ppid"] != child.pid and pid != child.pid:
            chain.append(pid)
            pid = procs[pid]["ppid"]
        return pid if pid in procs and procs[pid]["ppid"] == child.pid else None

    stages = {}
    for pid, p in procs.items():
        if pid == child.pid:
            continue
        root = stage_root(pid)
        if root is None:
            continue
        s = stages.setdefault(root, {"label": stage_of(procs[root]["argv"]), "cpu": 0.0,
                                     "first": procs[root]["first"], "last": procs[root]["last"]})
        s["cpu"] += p["cpu"]
        s["last"] = max(s["last"], p["last"])
    own = procs.get(child.pid, {}).get("cpu", 0.0)
    rows = sorted(stages.values(), key=lambda s: s["first"])
    print(f"{'stage':<12} {'cpu s':>8} {'from':>6} {'to':>6} {'cores':>6}")
    for s in rows:
        span = max(s["last"] - s["first"], 0.5)
        print(f"{s['label']:<12} {s['cpu']:8.1f} {s['first']:6.1f} {s['last']:6.1f} {s['cpu'] / span:6.2f}")
    total = sum(s["cpu"] for s in rows) + own
    print(f"{'cudawatch':<12} {own:8.1f}")
    print(f"all: {total:.1f} CPU s in {wall:.1f} s wall = {total / wall:.2f} of {os.cpu_count()} cores")
    with open(out, "w") as f:
        json.dump({"wall": wall, "cores": os.cpu_count(), "rc": child.returncode, "stages": rows,
                   "cudawatch_cpu": own}, f, indent=1)
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
