# cudawatch's startup hook, put first on PYTHONPATH for the stages that
# need to know what happened inside a Python program: csan, memory and
# oom-recovery.
#
# The contract ("running under cudawatch", docs/pytorch.md):
# - it runs the user's own sitecustomize first (ours shadows it on the
#   path), so nothing of the user's setup is lost; usercustomize is imported
#   by Python itself, as always;
# - it does nothing to a program that never imports torch, and nothing to
#   CUDA before the program itself initialises it; it writes nothing into
#   the user's tree, only into the stage's folder (CUDAWATCH_HOOK_OUT);
# - CUDAWATCH_NO_HOOK=1 turns it off (the stage is then inconclusive);
# - it never raises: a hook that breaks must not break the program. What
#   went wrong goes into hook.json ("errors"), which the stage reports. The
#   one exception it raises on purpose is SystemExit(0) after the program's
#   Nth optimizer step, or, in a program that builds no optimizer, its Nth
#   top-level model call (CUDAWATCH_STOP_AFTER_STEPS: a tool stage's first
#   steps, CUDAWATCH_STEPS_BY_DEFAULT=1, or the user's `--steps`).
# - one run changes what the program does on purpose: initcheck's rerun
#   with every tensor filled (CUDAWATCH_FILL_TENSORS=1) turns PyTorch's
#   deterministic mode on (warn_only), whose fill_uninitialized_memory
#   writes each new tensor, and keeps it on ("tensors_filled" in hook.json:
#   whether the fill was still on at exit).
#
# Files it writes (read by cudawatch's parsers/src/memory.rs):
# - hook.json at exit: what the hook saw (torch imported, CUDA used, CSAN
#   on, the memory cap applied) and, for the memory stages, the peak and the
#   live memory at the peak and at exit, grouped by allocating stack; of a
#   program's several Python processes, the one that used CUDA with the
#   highest peak keeps it (the others' peaks go into peaks.jsonl), each
#   deciding under a lock on the empty hook.lock beside it;
# - peaks.jsonl, a line per process that used CUDA, at its exit: its pid,
#   rank and peak, so that a multi-process program's account says whose
#   peak it shows;
# - oom-PID-N.json at each out-of-memory error, written by PyTorch's OOM
#   observer before the exception unwinds (so a program killed later keeps
#   it): the request, the device's figures and the live memory;
# - processes.jsonl: a line when the hook starts in a process ({"pid",
#   "hook": "start"}) and one when torch was loaded there ({"pid", "torch":
#   true, "csan": on or off}): cudawatch compares them with the processes it
#   saw using the GPU, so a worker whose launcher cleared its environment
#   (no hook, no CSAN) makes the stage inconclusive, not clean;
# - steps.jsonl, a line per optimizer step of each process (its pid and,
#   in torch.distributed programs, its rank): memory still allocated after
#   it (and the live memory by stack at steps 2, 4, 8, 16, ...). Each line
#   is one write(2) to a file opened for appending, so the lines of ranks
#   stepping at once never mix.
import os
import sys
import weakref

_OUT = os.environ.get("CUDAWATCH_HOOK_OUT")
_NONCE = os.environ.get("CUDAWATCH_HOOK_NONCE")
_MEMORY = os.environ.get("CUDAWATCH_MEMORY") == "1"
_CSAN = bool(os.environ.get("TORCH_CUDA_SANITIZER"))
try:
    _STOP_AFTER = max(int(os.environ.get("CUDAWATCH_STOP_AFTER_STEPS", "0") or 0), 0)
except ValueError:
    _STOP_AFTER = 0
_steps_seen = 0
_CUDNN_BENCHMARK_OFF = os.environ.get("CUDAWATCH_CUDNN_BENCHMARK_OFF") == "1"
_FILL_TENSORS = os.environ.get("CUDAWATCH_FILL_TENSORS") == "1"
_facts = {"hook": 2, "python": sys.version.split()[0], "errors": []}
_oom_count = 0
_step_count = 0
# Enough trace entries to find the peak of one training step of a large
# model; the trace is only read at exit and at an OOM.
_ENTRIES = int(os.environ.get("CUDAWATCH_MEMORY_ENTRIES", "100000") or 100000)
_MAX_OOM_FILES = 5
_MAX_GROUPS = 200
_MAX_FRAMES = 12


def _run_users_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.pop("sitecustomize", None)
    saved = list(sys.path)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        import importlib

        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    except Exception as error:  # the user's own hook failed: say so, go on
        print(f"cudawatch hook: your sitecustomize raised {error!r}", file=sys.stderr)
    finally:
        sys.path[:] = saved
        if ours is not None:
            sys.modules["sitecustomize"] = ours


def _error(where, error):
    _facts["errors"].append(f"{where}: {type(error).__name__}: {error}"[:300])


def _write(name, doc, mode="w"):
    if not _OUT:
        return
    try:
        import json

        if mode == "a":
            # The stage's nonce: a line without it is not this run's.
            doc = dict(doc, nonce=_NONCE) if _NONCE else doc
            _append_line(name, json.dumps(doc, separators=(",", ":")))
            return
        with open(os.path.join(_OUT, name), mode) as f:
            json.dump(doc, f, separators=(",", ":"))
    except Exception:
        pass


def _append_line(name, text):
    """One line in one write(2) on a file opened with O_APPEND: the ranks
    of a torch.distributed program append to the same file at once, and
    json.dump's many small writes would interleave their lines."""
    data = (text + "\n").encode()
    fd = os.open(os.path.join(_OUT, name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


_rank = []


def _process():
    """This process in a multi-process program: its pid and, once
    torch.distributed knows it (or torchrun said it), its rank, kept for
    the exit report (programs destroy their process group before exit;
    torch.multiprocessing.spawn sets no RANK)."""
    who = {"pid": os.getpid()}
    rank = os.environ.get("RANK")
    try:
        dist = sys.modules.get("torch.distributed")
        if dist is not None and dist.is_available() and dist.is_initialized():
            rank = dist.get_rank()
    except Exception:
        pass
    try:
        if rank is not None:
            _rank[:] = [int(rank)]
    except ValueError:
        pass
    if _rank:
        who["rank"] = _rank[0]
    return who


# --- what the live memory is, from PyTorch's snapshot ---------------------

_torch_dir = None


def _frames(frames):
    """A stack, innermost first, without PyTorch's own Python files
    (except the innermost frame, the operator that allocated): the frames
    cudawatch needs to find the user's line, and little more."""
    kept = []
    for i, f in enumerate(frames or []):
        file = f.get("filename") or ""
        if i > 0 and _torch_dir and file.startswith(_torch_dir):
            continue
        kept.append([file, f.get("line") or 0, f.get("name") or ""])
        if len(kept) >= _MAX_FRAMES:
            break
    return kept


def _group(blocks):
    """(size, frames) pairs → groups by stack, largest first."""
    groups = {}
    for size, frames in blocks:
        key = tuple(tuple(f) for f in frames)
        g = groups.setdefault(key, [0, 0])
        g[0] += size
        g[1] += 1
    ordered = sorted(groups.items(), key=lambda kv: -kv[1][0])
    rest = ordered[_MAX_GROUPS:]
    return {
        "groups": [{"bytes": g[0], "count": g[1], "frames": [list(f) for f in key]} for key, g in ordered[:_MAX_GROUPS]],
        "other": {"bytes": sum(g[0] for _, g in rest), "count": sum(g[1] for _, g in rest)},
    }


_HELD = ("active_allocated", "active_pending_free")


def _state(snapshot):
    """The live memory of a snapshot grouped by allocating stack, and its
    segments: what fragmentation is made of."""
    blocks = []
    reserved = allocated = free_in_segments = largest_free = 0
    expandable = False
    segments = snapshot.get("segments", [])
    for seg in segments:
        reserved += seg.get("total_size", 0)
        expandable = expandable or bool(seg.get("is_expandable"))
        for b in seg.get("blocks", []):
            if b.get("state") in _HELD:
                allocated += b.get("size", 0)
                blocks.append((b.get("size", 0), _frames(b.get("frames"))))
            elif b.get("state") == "inactive":
                free_in_segments += b.get("size", 0)
                largest_free = max(largest_free, b.get("size", 0))
    state = _group(blocks)
    state.update(
        allocated=allocated,
        reserved=reserved,
        segments={
            "count": len(segments),
            "free_in_segments": free_in_segments,
            "largest_free_block": largest_free,
            "expandable": expandable,
        },
    )
    return state


def _live_blocks(snapshot):
    live = {}
    for seg in snapshot.get("segments", []):
        for b in seg.get("blocks", []):
            if b.get("state") in _HELD:
                live[b.get("address")] = (b.get("size", 0), _frames(b.get("frames")))
    return live


def _peak(snapshot, max_allocated):
    """The live memory at the peak, found by walking the allocator's trace
    backwards from now: undoing an allocation removes its block, undoing a
    free puts it back (with its stack, when its allocation is in the trace).
    When the trace does not reach back to the peak, the largest moment it
    holds is given, marked as such."""
    live = _live_blocks(snapshot)
    traces = snapshot.get("device_traces") or []
    trace = []
    for t in traces:
        if t:
            trace = t  # the device the program used (one, in practice)
    allocated = sum(size for size, _ in live.values())
    alloc_frames = {}
    for t in trace:
        if t.get("action") == "alloc":
            alloc_frames.setdefault(t.get("addr"), []).append(_frames(t.get("frames")))
    best = allocated
    best_index = len(trace)
    changes = []  # undo log from the end
    for i in range(len(trace) - 1, -1, -1):
        t = trace[i]
        action, addr, size = t.get("action"), t.get("addr"), t.get("size") or 0
        if action == "alloc":
            allocated -= size
            changes.append(("remove", addr, size, i))
        elif action == "free_completed":
            allocated += size
            changes.append(("add", addr, size, i))
        else:
            continue
        if allocated > best:
            best, best_index = allocated, i
    # Rebuild the live set at best_index by undoing the changes after it.
    at_peak = dict(live)
    for kind, addr, size, i in changes:
        if i < best_index:
            break
        if kind == "remove":
            at_peak.pop(addr, None)
        else:
            known = [fr for fr in alloc_frames.get(addr, [])]
            at_peak[addr] = (size, known[-1] if known else [])
    state = _group(at_peak.values())
    state.update(allocated=best, trace_entries=len(trace), trace_full=len(trace) >= _ENTRIES)
    state["reaches_peak"] = best >= max_allocated
    return state


def _figures(torch):
    c = torch.cuda
    free, total = c.mem_get_info()
    return {
        "allocated": c.memory_allocated(),
        "reserved": c.memory_reserved(),
        "max_allocated": c.max_memory_allocated(),
        "max_reserved": c.max_memory_reserved(),
        "device_free": free,
        "device_total": total,
    }


# --- the memory stages' instruments ----------------------------------------


def _on_oom(device, alloc, device_allocated, device_free):
    """PyTorch's OOM observer: called inside the failing allocation, before
    the exception exists, so the live memory is what it was."""
    global _oom_count
    _oom_count += 1
    if _oom_count > _MAX_OOM_FILES:
        return
    torch = sys.modules.get("torch")
    try:
        snapshot = torch.cuda.memory._snapshot()
        request = None
        for trace in snapshot.get("device_traces") or []:
            for t in reversed(trace or []):
                if t.get("action") == "oom":
                    request = _frames(t.get("frames"))
                    break
        doc = {
            "oom": _oom_count,
            "device": device,
            "request": alloc,
            "request_frames": request,
            "device_allocated": device_allocated,
            "device_free": device_free,
            "figures": _figures(torch),
            "fraction_cap": _facts.get("cap"),
            "state": _state(snapshot),
            "step": _step_count,
        }
        # One file per process and OOM: two ranks that both run out of
        # memory must not write the same oom-1.json.
        doc["process"] = _process()
        _write(f"oom-{os.getpid()}-{_oom_count}.json", doc)
    except Exception as error:
        _error("oom observer", error)


def _on_step(optimizer, args, kwargs):
    global _step_count
    _step_count += 1
    torch = sys.modules.get("torch")
    try:
        if not torch.cuda.is_initialized():
            return
        line = {
            "step": _step_count,
            "allocated": torch.cuda.memory_allocated(),
            "reserved": torch.cuda.memory_reserved(),
            **_process(),
        }
        # The live memory by stack at a few steps: growth is then
        # attributed to the stack whose memory grows, for a cost that
        # grows with the log of the number of steps.
        if _MEMORY and _step_count >= 2 and (_step_count & (_step_count - 1)) == 0:
            line["state"] = _state(torch.cuda.memory._snapshot())
        _write("steps.jsonl", line, mode="a")
    except Exception as error:
        _error("step", error)


def _cap(torch):
    """The oom-recovery stage: the usable memory capped to a share of the
    peak allocated memory the memory stage measured (the cap applies to
    reserved memory, but the allocator frees its cache and retries before
    it gives up, so what the program cannot do without is what it had
    allocated). A program that sets its own fraction keeps the lower."""
    source = os.environ.get("CUDAWATCH_CAP_FROM")
    if not source:
        return
    import json

    share = float(os.environ.get("CUDAWATCH_CAP_SHARE", "0.6"))
    try:
        with open(source) as f:
            measured = json.load(f)
        peak = int(measured["peak"]["max_allocated"])
    except Exception as error:
        _facts["cap"] = {"error": f"no peak to cap below ({type(error).__name__}: {error})"[:300]}
        return
    _, total = torch.cuda.mem_get_info()
    cap = {"peak_allocated": peak, "share": share, "bytes": int(peak * share), "device_total": total}
    cap["fraction"] = cap["bytes"] / total
    _facts["cap"] = cap
    original = torch.cuda.set_per_process_memory_fraction

    def lower_of_both(fraction, device=None):
        cap["program_fraction"] = fraction
        return original(min(fraction, cap["fraction"]), device)

    original(cap["fraction"])
    torch.cuda.set_per_process_memory_fraction = lower_of_both
    torch.cuda.memory.set_per_process_memory_fraction = lower_of_both


def _on_cuda_init():
    torch = sys.modules.get("torch")
    _facts["cuda_initialized"] = True
    try:
        torch.cuda.memory._record_memory_history(max_entries=_ENTRIES, context="alloc", stacks="python")
        _facts["history"] = True
    except Exception as error:
        _facts["history"] = False
        _error("record_memory_history", error)
    try:
        torch._C._cuda_attach_out_of_memory_observer(_on_oom)
        _facts["oom_observer"] = True
    except Exception as error:
        _facts["oom_observer"] = False
        _error("oom observer", error)
    try:
        _cap(torch)
    except Exception as error:
        _facts["cap"] = {"error": f"{type(error).__name__}: {error}"[:300]}


def _stop_after_step(optimizer, args, kwargs):
    """`--steps N`: ends the program after its Nth optimizer step, in every
    stage alike. The steps' kernels are waited for first, so an error they
    made surfaces here as it would have at the program's next
    synchronisation (it is the program's, so it is not caught); then
    SystemExit(0), which the program's own `finally` blocks and atexit
    handlers see as a normal end.

    Steps are counted per optimizer: a GAN's loop steps its
    discriminator's optimizer and then its generator's, and a count of
    both together ended it after the first, before the generator's
    backward pass and update had run once (tests/gpu/real/train_dcgan.py
    on the H200). The program ends once every optimizer it built and still
    holds has stepped N times; one that is never stepped (built for a later
    phase) cannot keep it running past 8N steps of another."""
    global _steps_seen
    _steps_seen += 1
    counts = _optimizers_stepped
    try:
        _optimizers_held.add(optimizer)
        counts[optimizer] = counts.get(optimizer, 0) + 1
        held = [counts.get(built, 0) for built in list(_optimizers_held)]
    except TypeError:  # an optimizer that cannot be weakly referenced
        held = [_steps_seen]
    if min(held) >= _STOP_AFTER:
        steps, behind = min(held), 0
    elif max(held) >= 8 * _STOP_AFTER:
        steps, behind = max(held), sum(1 for n in held if n < _STOP_AFTER)
    else:
        return
    if not _may_end_here():
        return
    _facts["stopped_after_steps"] = steps
    if behind:
        _facts["optimizers_behind"] = behind
        _stop(f"{steps} steps of one optimizer ({behind} other(s) stepped fewer than {_STOP_AFTER} times)")
    if len(held) > 1:
        _facts["stopped_optimizers"] = len(held)
        _stop(f"{steps} steps of each of its {len(held)} optimizers")
    _stop(f"{steps} optimizer steps")


def _may_end_here():
    """Whether the step limit may end the program now. The stage's own
    default does not end a test suite: pytest's tests each take a few steps
    of their own (a suite is no training loop), and a SystemExit inside a
    test fails it, which left every stage of a correct suite inconclusive
    (tests/gpu/real/pytest_model_ok, H200). The suite runs whole, as it
    always did; the user's `--steps` still ends it."""
    if os.environ.get("CUDAWATCH_STEPS_BY_DEFAULT") == "1" and "_pytest" in sys.modules:
        _facts["test_suite_ran_whole"] = True
        return False
    return True


def _stop(what):
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    why = "this stage's first steps" if os.environ.get("CUDAWATCH_STEPS_BY_DEFAULT") == "1" else "--steps"
    print(f"cudawatch: the program was ended after {what} ({why})", file=sys.stderr)
    raise SystemExit(0)


_optimizer_built = []
_calls_seen = 0
# The optimizers the program built or stepped (weakly: one it drops no
# longer counts), and how often each stepped: `--steps` counts each's.
_optimizers_held = weakref.WeakSet()
_optimizers_stepped = weakref.WeakKeyDictionary()


def _stop_after_calls(torch):
    """`--steps N` in a program that builds no optimizer (inference,
    evaluation, generation): ends it after its Nth top-level model call,
    a call of a torch.nn.Module made outside any other module's call
    (each generated token's forward, each evaluated batch). A program
    that builds a torch.optim optimizer is counted in optimizer steps
    only. Inside code torch.compile traces the hooks do nothing, so
    they never break a graph."""
    import threading

    from torch.nn.modules import module as modules

    init = torch.optim.Optimizer.__init__

    def built(self, *args, **kwargs):
        _optimizer_built[:] = [True]
        try:
            _optimizers_held.add(self)
        except TypeError:  # an optimizer class with __slots__ and no weakref
            pass
        return init(self, *args, **kwargs)

    torch.optim.Optimizer.__init__ = built
    local = threading.local()
    compiler = getattr(torch, "compiler", None)
    compiling = getattr(compiler, "is_compiling", None) or (lambda: False)

    def before(module, args):
        if compiling():
            return
        local.depth = getattr(local, "depth", 0) + 1

    def after(module, args, output):
        global _calls_seen
        if compiling():
            return
        local.depth = max(getattr(local, "depth", 1) - 1, 0)
        # A call that raised comes here too (always_call): its exception
        # is the program's, and goes on.
        if local.depth or _optimizer_built or sys.exc_info()[0] is not None:
            return
        _calls_seen += 1
        if _calls_seen >= _STOP_AFTER and _may_end_here():
            _facts["stopped_after_calls"] = _calls_seen
            _stop(f"{_calls_seen} model calls")

    modules.register_module_forward_pre_hook(before)
    try:
        modules.register_module_forward_hook(after, always_call=True)
    except TypeError:  # a torch whose global hooks have no always_call
        modules.register_module_forward_hook(after)


def _cudnn_benchmark_off(torch):
    """The tool stages: cuDNN's benchmark mode kept off. With
    `torch.backends.cudnn.benchmark = True` cuDNN times every candidate
    algorithm of each convolution on first use; under racecheck and ncu
    that alone ran a ResNet-18 step past 300 s (H100, torch 2.11,
    tests/gpu/beyond/cudnn_benchmark_step.py), and timings under a tool say
    nothing of the GPU anyway. The program's requests (the attribute, and
    `torch.backends.cudnn.flags`) are counted into hook.json and refused;
    cuDNN picks by its heuristics, as without benchmark mode."""
    import torch.backends.cudnn  # noqa: F401  (torch may import it lazily)

    c = torch._C
    set_benchmark = c._set_cudnn_benchmark

    def refused(value):
        if value:
            _facts["cudnn_benchmark_refused"] = _facts.get("cudnn_benchmark_refused", 0) + 1
        set_benchmark(False)

    # `flags()` and `set_flags()` look the setter up on torch._C each time;
    # the attribute's descriptor kept the original, so it is replaced too.
    c._set_cudnn_benchmark = refused
    module_type = type(torch.backends.cudnn)
    prop = module_type.__dict__.get("benchmark")
    if prop is not None and hasattr(prop, "getter"):
        module_type.benchmark = type(prop)(prop.getter, refused)
    set_benchmark(False)


def _fill_new_tensors(torch):
    """initcheck's rerun with every tensor PyTorch allocates filled
    (CUDAWATCH_FILL_TENSORS, cudawatch's tools/sanitizer/tensors_filled.rs):
    deterministic mode's fill_uninitialized_memory writes each new tensor
    (torch.empty and its kin), so a read initcheck still reports is of
    memory no tensor holds, a kernel's own scratch. warn_only: an operation
    without a deterministic implementation warns instead of raising. A
    program that turns deterministic mode off keeps it on here, with its
    own warn_only (counted into hook.json); "tensors_filled" says the fill
    was on."""
    import torch.utils.deterministic  # noqa: F401  (not every torch imports it)

    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    original = torch.use_deterministic_algorithms

    def kept_on(mode, *, warn_only=False):
        if not mode:
            _facts["deterministic_kept_on"] = _facts.get("deterministic_kept_on", 0) + 1
            warn_only = True
        original(True, warn_only=warn_only)

    torch.use_deterministic_algorithms = kept_on
    _facts["tensors_filled"] = bool(
        torch.are_deterministic_algorithms_enabled() and torch.utils.deterministic.fill_uninitialized_memory
    )


def _torch_loaded(torch):
    global _torch_dir
    _torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    try:
        csan = sys.modules.get("torch.cuda._sanitizer")
        enabled = getattr(getattr(csan, "cuda_sanitizer", None), "enabled", None)
        _write("processes.jsonl", {"pid": os.getpid(), "torch": True, "csan": enabled}, mode="a")
    except Exception as error:
        _error("processes.jsonl", error)
    if _CUDNN_BENCHMARK_OFF:
        try:
            _cudnn_benchmark_off(torch)
        except Exception as error:
            _error("cudnn benchmark mode", error)
    if _FILL_TENSORS:
        try:
            _fill_new_tensors(torch)
        except Exception as error:
            _error("tensors filled", error)
    if _CSAN:
        try:
            _csan_outside_captures(torch)
        except Exception as error:
            _error("csan and CUDA graphs", error)
        try:
            _csan_counts_compile(torch)
        except Exception as error:
            _error("csan and torch.compile", error)
        try:
            _csan_follows_sparse(torch)
        except Exception as error:
            _error("csan and sparse tensors", error)
    if _MEMORY:
        _memory_hooks(torch)
    # After the memory stage's step hook: the last step is recorded before
    # `--steps` ends the program at it.
    if _STOP_AFTER:
        try:
            from torch.optim.optimizer import register_optimizer_step_post_hook

            register_optimizer_step_post_hook(_stop_after_step)
        except Exception as error:
            _error("--steps: optimizer step hook", error)
        try:
            _stop_after_calls(torch)
        except Exception as error:
            _error("--steps: model call hooks", error)


def _memory_hooks(torch):
    try:
        torch.cuda._lazy_call(_on_cuda_init)
    except Exception as error:
        _error("lazy_call", error)
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook

        register_optimizer_step_post_hook(_on_step)
        _facts["step_hook"] = True
    except Exception as error:
        _facts["step_hook"] = False
        _error("optimizer step hook", error)


def _csan_outside_captures(torch):
    """CSAN books each operator as running when it is called. Inside a CUDA
    graph capture (torch.cuda.graph, a CUDAGraph captured by hand) operators
    are only recorded into the graph, not run, and the capture stream never
    joins the others again: CSAN then took the capture's reads of a static
    input as still running, and the graph's own recipe (copy new data into
    the static input, replay) as a race (seen on the H100 with torch 2.11,
    tests/gpu/real/cudagraph_step.py). While a graph captures, CSAN's
    dispatch runs operators without booking them, counted; what the
    replays run, CSAN never sees. Both counts go into hook.json.

    The swap happens at capture_begin and is undone at capture_end, so
    outside captures CSAN runs untouched: a wrapper around every operator
    would be a frame in each race's call stack, and the innermost frame
    outside torch is the line a race is reported at."""
    # torch imports it when it turns CSAN on; a torch that did not has
    # nothing to adjust (the stage says CSAN was off or missing).
    csan = sys.modules.get("torch.cuda._sanitizer")
    if csan is None or not getattr(getattr(csan, "cuda_sanitizer", None), "enabled", False):
        return
    mode = csan.CUDASanitizerDispatchMode
    booked = mode.__torch_dispatch__
    graph = torch.cuda.CUDAGraph
    begin, end, replay = graph.capture_begin, graph.capture_end, graph.replay
    captures = [0]

    def unbooked(self, func, types, args=(), kwargs=None):
        _facts["csan_captured_ops"] = _facts.get("csan_captured_ops", 0) + 1
        return func(*args, **(kwargs or {}))

    def capture_begin(self, *args, **kwargs):
        result = begin(self, *args, **kwargs)
        captures[0] += 1
        mode.__torch_dispatch__ = unbooked
        return result

    def capture_end(self, *args, **kwargs):
        try:
            return end(self, *args, **kwargs)
        finally:
            captures[0] = max(captures[0] - 1, 0)
            if not captures[0]:
                mode.__torch_dispatch__ = booked

    def counted_replay(self, *args, **kwargs):
        _facts["csan_graph_replays"] = _facts.get("csan_graph_replays", 0) + 1
        return replay(self, *args, **kwargs)

    graph.capture_begin = capture_begin
    graph.capture_end = capture_end
    graph.replay = counted_replay


def _csan_follows_sparse(torch):
    """CSAN books each tensor argument by its data pointer, and a sparse
    tensor has none: its first sparse operator raised "Cannot access data
    pointer of Tensor that doesn't have storage" inside CSAN, ending a
    correct program (an EmbeddingBag with sparse=True and SparseAdam,
    H200, torch 2.11, tests/gpu/real/train_recsys.py). The parts that hold
    its data are dense tensors: CSAN is handed those instead, so an
    operator on a sparse tensor reads or writes its indices and values as
    it really does. A layout whose parts cudawatch does not know is left
    out of that operator's booking and counted into hook.json, which the
    stage's reason then names."""
    csan = sys.modules.get("torch.cuda._sanitizer")
    if csan is None or not getattr(getattr(csan, "cuda_sanitizer", None), "enabled", False):
        return
    handler = getattr(csan, "ArgumentHandler", None)
    handle = getattr(handler, "_handle_argument", None)
    if handle is None:
        return

    def by_rows(t):
        return (t.crow_indices(), t.col_indices(), t.values())

    def by_columns(t):
        return (t.ccol_indices(), t.row_indices(), t.values())

    layouts = {
        "sparse_coo": lambda t: (t._indices(), t._values()),
        "sparse_csr": by_rows,
        "sparse_bsr": by_rows,
        "sparse_csc": by_columns,
        "sparse_bsc": by_columns,
    }
    parts_of = {getattr(torch, name): parts for name, parts in layouts.items() if hasattr(torch, name)}

    def follow_sparse(self, value, *args, **kwargs):
        is_tensor = isinstance(value, torch.Tensor)
        parts = parts_of.get(value.layout) if is_tensor and value.is_cuda else None
        if parts is None:
            try:
                return handle(self, value, *args, **kwargs)
            except (RuntimeError, NotImplementedError):
                if not is_tensor or value.layout == torch.strided:
                    raise
                # A layout without storage whose parts are not known here.
                _facts["csan_unfollowed_args"] = _facts.get("csan_unfollowed_args", 0) + 1
                return None
        _facts["csan_sparse_args"] = _facts.get("csan_sparse_args", 0) + 1
        for part in parts(value):
            handle(self, part, *args, **kwargs)
        return None

    handler._handle_argument = follow_sparse


def _csan_counts_compile(torch):
    """Dynamo compiles nothing while a torch dispatch mode is on ("non-infra
    torch dispatch mode present, this is not supported today in
    torch.compile"), and CSAN is one: under CSAN a torch.compile'd function
    runs as eager PyTorch operators, which CSAN checks, and Inductor's
    kernels never run (seen on the H100 with torch 2.11,
    tests/gpu/beyond/compile_csan.py: Dynamo's frame count 0, the race
    reported at the compiled function's own source line). The stage says
    so when the program asked for torch.compile: the calls are counted."""
    csan = sys.modules.get("torch.cuda._sanitizer")
    if csan is None or not getattr(getattr(csan, "cuda_sanitizer", None), "enabled", False):
        return
    compile_ = getattr(torch, "compile", None)
    if compile_ is None:
        return

    def counted_compile(*args, **kwargs):
        _facts["csan_compile_calls"] = _facts.get("csan_compile_calls", 0) + 1
        return compile_(*args, **kwargs)

    counted_compile.__doc__ = compile_.__doc__
    counted_compile.__wrapped__ = compile_
    torch.compile = counted_compile


class _AfterTorch:
    """A finder that lets Python import torch as usual, then arms the
    memory instruments and CSAN's view of CUDA graphs: nothing happens to
    programs that never import it."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            try:
                _torch_loaded(module)
            except Exception as error:
                _error("torch import", error)

        loader.exec_module = exec_module
        return spec


def _csan_off_in_forked_child():
    """CSAN in a forked child (a DataLoader worker) intercepts the worker's
    CPU operators and initialises CUDA, which a forked child cannot: the
    worker dies with "Cannot re-initialize CUDA in forked subprocess" and
    the program with it (seen on the H100 with torch 2.11: a DataLoader
    with num_workers=2 exited 1 under CSAN, fine without it). A forked
    child cannot use CUDA at all, so CSAN has nothing to watch there."""
    try:
        csan = sys.modules.get("torch.cuda._sanitizer")
        sanitizer = getattr(csan, "cuda_sanitizer", None)
        if sanitizer is None or not getattr(sanitizer, "enabled", False):
            return
        if hasattr(sanitizer, "disable"):
            sanitizer.disable()
        else:
            sanitizer.dispatch.__exit__(None, None, None)
            sanitizer.enabled = False
    except Exception:
        pass


def _report():
    torch = sys.modules.get("torch")
    _facts["torch_imported"] = torch is not None
    # Whether XLA's settings under the tools (cudawatch's tools/xla.rs)
    # concerned this program.
    _facts["jax_imported"] = "jax" in sys.modules
    _facts["ooms"] = _oom_count
    _facts["steps"] = _step_count
    if torch is not None:
        _facts["torch_version"] = str(getattr(torch, "__version__", "?"))
        # Whether this process used CUDA at all, in every stage (the memory
        # stage also knows when): a CSAN that watched a program without
        # CUDA checked no stream.
        try:
            _facts["cuda_used"] = bool(torch.cuda.is_initialized())
        except Exception:
            pass
        try:
            csan = sys.modules.get("torch.cuda._sanitizer")
            enabled = getattr(getattr(csan, "cuda_sanitizer", None), "enabled", None)
            _facts["csan_enabled"] = None if enabled is None else bool(enabled)
        except Exception:
            _facts["csan_enabled"] = None
        if _facts.get("tensors_filled"):
            # Still on at the end: a program that set
            # torch.utils.deterministic.fill_uninitialized_memory = False
            # itself left tensors unfilled, and the rerun proves nothing.
            try:
                _facts["tensors_filled"] = bool(
                    torch.are_deterministic_algorithms_enabled()
                    and torch.utils.deterministic.fill_uninitialized_memory
                )
            except Exception as error:
                _facts["tensors_filled"] = False
                _error("tensors filled at exit", error)
        if _MEMORY and _facts.get("cuda_initialized"):
            try:
                figures = _figures(torch)
                snapshot = torch.cuda.memory._snapshot()
                _facts["peak"] = {k: figures[k] for k in ("max_allocated", "max_reserved", "device_total")}
                _facts["exit"] = _state(snapshot)
                _facts["exit"]["figures"] = figures
                _facts["at_peak"] = _peak(snapshot, figures["max_allocated"])
            except Exception as error:
                _error("exit snapshot", error)
    if _facts.get("peak"):
        _write("peaks.jsonl", {**_process(), **_facts["peak"], "steps": _step_count}, mode="a")
    # Each process that used CUDA says so at its exit: a worker too short
    # for the GPU sampler is still counted against the plain run's.
    if _facts.get("cuda_used"):
        _write("processes.jsonl", {"pid": os.getpid(), "cuda": True}, mode="a")
    _keep_weightier_facts()


def _keep_weightier_facts():
    """hook.json is written by the process whose facts tell most, under a
    lock: the ranks of a torch.distributed program exit at once."""
    if not _OUT:
        return
    lock = None
    try:
        import fcntl

        lock = os.open(os.path.join(_OUT, "hook.lock"), os.O_WRONLY | os.O_CREAT, 0o644)
        fcntl.flock(lock, fcntl.LOCK_EX)
    except Exception:
        lock = None
    try:
        if _weight(_read("hook.json")) > _weight(_facts):
            return
        _write("hook.json", _facts)
    finally:
        if lock is not None:
            os.close(lock)


def _weight(facts):
    """How much of the program a process's facts tell: one that used CUDA
    over one that only imported torch over one that did neither, and of
    several that used CUDA, the one with the highest peak. Every Python
    process of the program runs this hook and writes hook.json at exit:
    torchrun's agent (torch, no CUDA) after its worker, and
    multiprocessing's resource tracker (no torch) after the spawned worker
    and its parent (seen on the H100, tests/gpu/real/ddp_step.py), whose
    last words would otherwise say the program never imported torch."""
    if not isinstance(facts, dict):
        return (0, 0)
    peak = facts.get("peak") if isinstance(facts.get("peak"), dict) else {}
    return (
        2 * bool(facts.get("cuda_initialized") or facts.get("cuda_used")) + bool(facts.get("torch_imported")),
        peak.get("max_allocated") or 0,
    )


def _read(name):
    if not _OUT:
        return None
    try:
        import json

        with open(os.path.join(_OUT, name)) as f:
            return json.load(f)
    except Exception:
        return None


_run_users_sitecustomize()
if os.environ.get("CUDAWATCH_NO_HOOK") != "1":
    try:
        import atexit

        atexit.register(_report)
        if os.environ.get("TORCH_CUDA_SANITIZER") and hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_csan_off_in_forked_child)
        if _MEMORY or os.environ.get("CUDAWATCH_CAP_FROM"):
            _MEMORY = True
        if _OUT:
            _write("processes.jsonl", {"pid": os.getpid(), "hook": "start"}, mode="a")
        if _MEMORY or _CSAN or _STOP_AFTER or _CUDNN_BENCHMARK_OFF or _FILL_TENSORS:
            if "torch" in sys.modules:
                # The user's sitecustomize (or a .pth file) imported torch
                # before the hook could watch the import: arm now.
                _torch_loaded(sys.modules["torch"])
            else:
                sys.meta_path.insert(0, _AfterTorch())
    except Exception:
        pass
