"""An out-of-memory error that fragmentation causes and expandable segments
avoid. Batches of varying length are carved out of one cached segment (the
caching allocator splits a large free block to serve smaller requests);
every other one is kept, as a bucketed data loader keeps its longest
sequences, so the segment can never be released; then one larger request
finds 720 MiB free in the segment, but no hole larger than 60 MiB, and the
1.8 GiB cap (a small GPU, emulated) leaves no room for a new segment.
With PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True the free pages are
unmapped and mapped again for the request, and the program finishes."""
import torch

torch.cuda.set_per_process_memory_fraction(1.8 * 2**30 / torch.cuda.get_device_properties(0).total_memory)
MiB = 2**20
warm = torch.empty(1536 * MiB, dtype=torch.uint8, device="cuda")  # one big segment
del warm
batches = [torch.empty(60 * MiB, dtype=torch.uint8, device="cuda") for _ in range(24)]
kept = batches[1::2]  # the long sequences stay, the short ones go
del batches
merged = torch.empty(400 * MiB, dtype=torch.uint8, device="cuda")  # needs one 400 MiB hole
print("done", merged.numel() + sum(k.numel() for k in kept))
