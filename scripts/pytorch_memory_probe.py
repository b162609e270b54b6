"""Runs a PyTorch script with the caching allocator's history on and dumps
what PyTorch knows about its memory as JSON, at an out-of-memory error
(from the OOM observer, before the exception unwinds) and at exit.

A probe of the formats the memory-forensics stage will read; not the
stage's hook. Usage: python3 pytorch_memory_probe.py OUTDIR script.py [args]
"""
import json
import os
import runpy
import sys
import time

out_dir, script = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[2:]
os.makedirs(out_dir, exist_ok=True)

import torch  # noqa: E402

torch.cuda.memory._record_memory_history(max_entries=100000)


def compact(snapshot):
    """The snapshot without its bulk: segments with their blocks, each
    block's first frames, and the last trace entries."""
    def frames(fs):
        return [{"file": f.get("filename"), "line": f.get("line"), "name": f.get("name")} for f in (fs or [])[:12]]

    segments = []
    for seg in snapshot.get("segments", []):
        segments.append({k: seg.get(k) for k in ("device", "address", "total_size", "allocated_size",
                                                 "active_size", "requested_size", "stream", "segment_type",
                                                 "is_expandable")}
                        | {"frames": frames(seg.get("frames")),
                           "blocks": [{"size": b.get("size"), "requested_size": b.get("requested_size"),
                                       "state": b.get("state"), "address": b.get("address"),
                                       "frames": frames(b.get("frames"))} for b in seg.get("blocks", [])]})
    traces = []
    for dev in snapshot.get("device_traces", []):
        traces.append([{"action": t.get("action"), "addr": t.get("addr"), "size": t.get("size"),
                        "stream": t.get("stream"), "frames": frames(t.get("frames"))[:6]} for t in dev[-300:]])
    return {"segments": segments, "device_traces_tail": traces, "keys": sorted(snapshot.keys())}


def dump(name, extra=None):
    snap = torch.cuda.memory._snapshot()
    doc = {"when": name, "time": time.time(), "memory_allocated": torch.cuda.memory_allocated(),
           "memory_reserved": torch.cuda.memory_reserved(), "max_memory_allocated": torch.cuda.max_memory_allocated(),
           "mem_get_info": list(torch.cuda.mem_get_info()), "extra": extra, "snapshot": compact(snap)}
    with open(os.path.join(out_dir, f"memory-{name}.json"), "w") as f:
        json.dump(doc, f, default=str)


def on_oom(device, alloc, device_alloc, device_free):
    dump("oom", {"device": device, "alloc": alloc, "device_allocated": device_alloc, "device_free": device_free})


torch._C._cuda_attach_out_of_memory_observer(on_oom)
try:
    runpy.run_path(script, run_name="__main__")
finally:
    dump("exit")
