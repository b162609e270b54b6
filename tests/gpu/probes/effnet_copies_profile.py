"""Which ATen op issues EfficientNet's 73,728-byte copies, and on which
thread: tests/gpu/real/train_effnet_fp16.py for two steps under PyTorch's
profiler, each such copy's runtime call, thread and enclosing ops. Run
from the repository's root."""
import json, sys, collections, torch, runpy
from torch.profiler import profile, ProfilerActivity
sys.argv = ["train_effnet_fp16.py", "--steps", "2"]
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True) as prof:
    runpy.run_path("tests/gpu/real/train_effnet_fp16.py", run_name="__main__")
prof.export_chrome_trace("/tmp/effnet_trace.json")
t = json.load(open("/tmp/effnet_trace.json"))
ev = t["traceEvents"]
rt = {e["args"].get("correlation"): e for e in ev if e.get("cat") == "cuda_runtime"}
ops = [e for e in ev if e.get("cat") in ("cpu_op", "python_function") and "dur" in e]
sizes = collections.Counter()
seen = collections.Counter()
for e in ev:
    if e.get("cat") != "gpu_memcpy":
        continue
    b = e["args"].get("bytes"); sizes[(e["name"], b)] += 1
    if b != 73728: continue
    r = rt.get(e["args"].get("correlation"))
    if not r: print("no runtime for", e); continue
    enc = [o for o in ops if o["tid"] == r["tid"] and o["pid"] == r["pid"] and o["ts"] <= r["ts"] and o["ts"] + o["dur"] >= r["ts"] + r.get("dur", 0)]
    enc.sort(key=lambda o: o["ts"])
    key = (r["name"], r["tid"], " > ".join(o["name"][:60] for o in enc[-8:]))
    seen[key] += 1
print("memcpy sizes:", sizes.most_common(20))
for k, n in seen.most_common(20): print(n, k)
