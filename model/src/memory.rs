//! What PyTorch's caching allocator held, as cudawatch's memory stage read
//! it from its Python hook: the state at each out-of-memory error, the
//! peak, the memory left allocated after each optimizer step. Every figure
//! is in bytes.

use serde::{Deserialize, Serialize};

use crate::SourceLocation;

/// The memory stage's account of a PyTorch program.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryReport {
    /// Highest allocated and reserved memory of the run, and the GPU's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<PeakMemory>,
    /// The live memory at the peak, by the user's allocating line, largest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at_peak: Vec<HeldLine>,
    /// Whether `at_peak` is the peak itself (the allocator's trace reached
    /// back to it) or the largest moment the trace held.
    #[serde(default)]
    pub at_peak_exact: bool,
    /// Each out-of-memory error, as the OOM observer saw it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ooms: Vec<OomState>,
    /// Memory still allocated after each optimizer step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepMemory>,
    /// Memory that grows step over step, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth: Option<Growth>,
    /// Each process that used CUDA, with its peak, when the program had
    /// several (the ranks of a torch.distributed program): `peak` and
    /// `at_peak` are then the highest peak's process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessPeak>,
}

/// One process of a program that ran several on CUDA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessPeak {
    /// Which process.
    #[serde(flatten)]
    pub process: ProcessId,
    /// Its `torch.cuda.max_memory_allocated()`.
    pub allocated: u64,
    /// Its `torch.cuda.max_memory_reserved()`.
    pub reserved: u64,
    /// Its optimizer steps.
    pub steps: u64,
}

/// A process of the program: its pid and, in a torch.distributed
/// program, its rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProcessId {
    /// The process id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The torch.distributed rank, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
}

impl std::fmt::Display for ProcessId {
    /// `rank 1 (pid 4242)`, `pid 4242`, or `one process` for steps read
    /// from a hook that did not say.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.rank, self.pid) {
            (Some(rank), Some(pid)) => write!(f, "rank {rank} (pid {pid})"),
            (Some(rank), None) => write!(f, "rank {rank}"),
            (None, Some(pid)) => write!(f, "pid {pid}"),
            (None, None) => f.write_str("one process"),
        }
    }
}

/// The run's high-water marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeakMemory {
    /// `torch.cuda.max_memory_allocated()`.
    pub allocated: u64,
    /// `torch.cuda.max_memory_reserved()`.
    pub reserved: u64,
    /// The GPU's memory.
    pub device_total: u64,
}

/// Memory held by one line of the user's code (its allocations, and what
/// the framework allocated on its behalf below it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldLine {
    /// The user's line; `None` when no frame of the stack is in the user's
    /// files (see `origin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    /// The function the line is in, or what allocated the memory when no
    /// user frame exists ("autograd's backward", the library's frame).
    pub origin: String,
    /// The framework call below the user's line that allocated (`conv2d`'s
    /// `_conv_forward` in `torch/nn/modules/conv.py:548`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Bytes held.
    pub bytes: u64,
    /// Tensors (allocator blocks) held.
    pub blocks: u64,
}

/// The allocator's state when a request failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OomState {
    /// Bytes asked for.
    pub request: u64,
    /// The user's line that asked, when the request had a Python stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    /// What asked, said in words (the user's function, or "autograd's backward").
    pub origin: String,
    /// `torch.cuda.memory_allocated()`.
    pub allocated: u64,
    /// `torch.cuda.memory_reserved()`.
    pub reserved: u64,
    /// Free memory on the GPU (`cudaMemGetInfo`).
    pub device_free: u64,
    /// The GPU's memory.
    pub device_total: u64,
    /// The cap the allocator worked under (`set_per_process_memory_fraction`),
    /// when the OOM message or cudawatch's own cap says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<u64>,
    /// Reserved by PyTorch but unallocated: free holes inside its segments.
    pub free_in_segments: u64,
    /// The largest of those holes.
    pub largest_free_block: u64,
    /// The holes would have covered the request, but no single one did.
    pub fragmentation: bool,
    /// Segments were expandable (`expandable_segments:True`) already.
    pub expandable: bool,
    /// The program rerun with `expandable_segments:True`: `Some(true)` when
    /// it then finished, `Some(false)` when it still failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expandable_helped: Option<bool>,
    /// Memory other processes held on the GPU ("Process 1248 has 77.17 GiB
    /// memory in use", from PyTorch's message).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_processes: Vec<OtherProcess>,
    /// The live memory by the user's allocating line, largest first.
    pub held: Vec<HeldLine>,
    /// Optimizer steps done before it.
    pub step: u64,
}

/// Another process's memory on the GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherProcess {
    /// Its process id.
    pub pid: u32,
    /// Its command name, when cudawatch could see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Bytes it held.
    pub bytes: u64,
}

/// Memory after one optimizer step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepMemory {
    /// The step, from 1, counted by its process.
    pub step: u64,
    /// Still allocated after it.
    pub allocated: u64,
    /// Reserved after it.
    pub reserved: u64,
    /// The process that stepped (each rank of a torch.distributed program
    /// steps its own optimizer).
    #[serde(flatten)]
    pub process: ProcessId,
}

/// Allocated memory rising step over step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Growth {
    /// Average growth per step over the steps judged.
    pub bytes_per_step: u64,
    /// First and last step judged.
    pub from_step: u64,
    /// Last step judged.
    pub to_step: u64,
    /// The user's lines whose live memory grew, most first, with their
    /// growth per step in `bytes`.
    pub lines: Vec<HeldLine>,
    /// The process whose memory grows, when the program stepped in
    /// several (the one growing most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessId>,
}

impl Growth {
    /// ` of rank 1 (pid 736)` after "steps 3-12" when the program stepped
    /// in several processes, else nothing.
    pub fn of_process(&self) -> String {
        self.process.map_or(String::new(), |p| format!(" of {p}"))
    }
}

/// `392.0 MiB`: a size as reports print it (binary units, one decimal).
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}
