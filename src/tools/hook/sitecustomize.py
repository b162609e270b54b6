# cudawatch's startup hook, put first on PYTHONPATH for the stages that
# need to know what happened inside a Python program (today: csan).
#
# The contract ("running under cudawatch", docs/pytorch.md):
# - it runs the user's own sitecustomize first (ours shadows it on the
#   path), so nothing of the user's setup is lost; usercustomize is imported
#   by Python itself, as always;
# - it does nothing to a program that never imports torch, and writes
#   nothing into the user's tree: one JSON file into the stage's folder
#   (CUDAWATCH_HOOK_OUT), at exit;
# - CUDAWATCH_NO_HOOK=1 turns it off (the stage is then inconclusive);
# - it never raises: a hook that breaks must not break the program.
import os
import sys


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


def _report():
    out = os.environ.get("CUDAWATCH_HOOK_OUT")
    if not out:
        return
    torch = sys.modules.get("torch")
    facts = {"hook": 1, "python": sys.version.split()[0], "torch_imported": torch is not None}
    if torch is not None:
        facts["torch_version"] = str(getattr(torch, "__version__", "?"))
        try:
            csan = sys.modules.get("torch.cuda._sanitizer")
            enabled = getattr(getattr(csan, "cuda_sanitizer", None), "enabled", None)
            facts["csan_enabled"] = None if enabled is None else bool(enabled)
        except Exception:
            facts["csan_enabled"] = None
    try:
        import json

        with open(os.path.join(out, "hook.json"), "w") as f:
            json.dump(facts, f)
    except Exception:
        pass


_run_users_sitecustomize()
if os.environ.get("CUDAWATCH_NO_HOOK") != "1":
    try:
        import atexit

        atexit.register(_report)
    except Exception:
        pass
