"""torch.cuda.memory of the fake torch: history on and off, and snapshots
in real torch's layout (segments with blocks, device traces)."""
_trace = []
recording = {}


def _record_memory_history(**kwargs):
    recording.update(kwargs)


def _snapshot():
    from torch import cuda

    blocks = [
        {"address": a, "size": s, "requested_size": s, "state": "active_allocated", "frames": f}
        for a, (s, f) in cuda._blocks.items()
    ]
    segment = {"total_size": sum(b["size"] for b in blocks), "blocks": blocks, "is_expandable": False}
    return {"segments": [segment] if blocks else [], "device_traces": [list(_trace)]}
