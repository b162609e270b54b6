"""EfficientNet's first step with the allocator's history on (C++ and
Python stacks), saved at exit into $SNAP: run under initcheck, then
effnet_copies_map.py says which allocation its host-API records read. Run
from the repository's root."""
import pickle, runpy, sys, atexit, torch, os
torch.cuda.memory._record_memory_history(max_entries=3_000_000, context="all", stacks="all")
def dump():
    pickle.dump(torch.cuda.memory._snapshot(), open(os.environ["SNAP"], "wb"))
atexit.register(dump)
sys.argv = ["train_effnet_fp16.py", "--steps", "1"]
runpy.run_path("tests/gpu/real/train_effnet_fp16.py", run_name="__main__")
