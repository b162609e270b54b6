"""Maps initcheck's host-API records (XML) to the allocations of the
allocator's history (effnet_copies_history.py's snapshot) that cover their
address: `effnet_copies_map.py FILE.xml SNAPSHOT.pickle`."""
import pickle, re, sys, collections
xml, snap = sys.argv[1], sys.argv[2]
t = open(xml).read()
recs = collections.Counter()
stacks = collections.Counter()
for r in re.findall(r"<record>.*?</record>", t, re.S):
    if "InitcheckApiError" not in r: continue
    recs[(int(re.search(r"<accessAddress>(\d+)", r).group(1)), int(re.search(r"<accessSize>(\d+)", r).group(1)))] += 1
    stacks["<hostStack>" in r] += 1
print("api records by (address,size):", len(recs), "records", sum(recs.values()), "with host stack:", dict(stacks))
s = pickle.load(open(snap, "rb"))
allocs = [e for tr in s["device_traces"] for e in tr if e["action"] == "alloc"]
print("allocs traced", len(allocs))
def frames(e):
    out = []
    for f in e.get("frames", []):
        n = f.get("name", "")
        if any(k in n for k in ("autograd", "Backward", "at::native", "aten::", ".py", "Engine")) or f.get("filename", "").endswith(".py"):
            out.append(f"{n[:70]} {f.get('filename','').split('/')[-1]}:{f.get('line','')}")
    return out[:10]
bysize = collections.Counter()
for (a, size), n in recs.most_common():
    hits = [e for e in allocs if e["addr"] <= a < e["addr"] + e["size"]]
    sizes = collections.Counter(e["size"] for e in hits)
    bysize[size] += n
    exact = [e for e in hits if e["size"] >= size and e["addr"] == a]
    print(f"record addr {a:#x} size {size} x{n}: {len(hits)} allocs cover it, sizes {sizes.most_common(4)}, {len(exact)} start there")
    for e in (exact or hits)[-2:]:
        print("   ", e["size"], " | ".join(frames(e)))
print(bysize)
