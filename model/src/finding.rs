//! What a finding is: its tool, kind and severity, where it happened, and
//! the site that folds every record of the same identity.

use serde::{Deserialize, Serialize};

/// The tool (or pass) that produced a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    /// The program run plainly, with `CUDA_LAUNCH_BLOCKING=1`.
    Plain,
    /// compute-sanitizer's memcheck (with leak checking).
    Memcheck,
    /// compute-sanitizer's racecheck.
    Racecheck,
    /// compute-sanitizer's initcheck.
    Initcheck,
    /// compute-sanitizer's synccheck.
    Synccheck,
    /// A compute-sanitizer output whose tool could not be told from the file.
    Sanitizer,
    /// Nsight Compute.
    Ncu,
    /// PyTorch's CUDA sanitizer (CSAN, `TORCH_CUDA_SANITIZER=1`): tensor
    /// accesses from different streams with nothing ordering them.
    Csan,
    /// PyTorch's caching allocator, watched by cudawatch's Python hook:
    /// what held the memory at an OOM, at the peak, and after each step.
    Memory,
    /// The program rerun with its usable GPU memory capped below the peak
    /// the memory stage measured: does it recover from running out?
    #[serde(rename = "oom-recovery")]
    OomRecovery,
    /// The program run plainly with the CUDA driver's GPU core dump on
    /// exception, the dump read back by cuda-gdb: the faulting kernel and
    /// line at the program's own speed, inside CUDA graphs too.
    Coredump,
    /// cudawatch's own Sanitizer API tool (`native/global-race/`): races
    /// in global memory, which racecheck (shared memory only) cannot see.
    #[serde(rename = "global-race")]
    GlobalRace,
}

impl Tool {
    /// The name used on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Plain => "plain",
            Tool::Memcheck => "memcheck",
            Tool::Racecheck => "racecheck",
            Tool::Initcheck => "initcheck",
            Tool::Synccheck => "synccheck",
            Tool::Sanitizer => "sanitizer",
            Tool::Ncu => "ncu",
            Tool::Csan => "csan",
            Tool::Memory => "memory",
            Tool::OomRecovery => "oom-recovery",
            Tool::Coredump => "coredump",
            Tool::GlobalRace => "global-race",
        }
    }

    /// The compute-sanitizer tools, in the order cudawatch runs them.
    pub const SANITIZERS: [Tool; 4] = [
        Tool::Memcheck,
        Tool::Racecheck,
        Tool::Initcheck,
        Tool::Synccheck,
    ];

    /// Every kind of stage a run can have, in the order cudawatch runs them:
    /// the one list that `--stages`, sweep files and the checklist follow.
    pub const STAGES: [Tool; 11] = [
        Tool::Plain,
        Tool::Coredump,
        Tool::Memcheck,
        Tool::Racecheck,
        Tool::GlobalRace,
        Tool::Initcheck,
        Tool::Synccheck,
        Tool::Csan,
        Tool::Memory,
        Tool::OomRecovery,
        Tool::Ncu,
    ];

    /// The stages run when `--stages` is not given: all but the opt-in
    /// oom-recovery check (a whole extra run meant to fail) and the opt-in
    /// global-race tool (first run on a GPU on 2026-11-28, not yet
    /// measured on real models: docs/global-race.md). The core dump
    /// runs only after a plain run that met a device exception.
    pub const DEFAULT_STAGES: [Tool; 9] = [
        Tool::Plain,
        Tool::Coredump,
        Tool::Memcheck,
        Tool::Racecheck,
        Tool::Initcheck,
        Tool::Synccheck,
        Tool::Csan,
        Tool::Memory,
        Tool::Ncu,
    ];

    /// What a stage of this kind does, in one line (`--stages`' help).
    pub fn summary(self) -> &'static str {
        match self {
            Tool::Plain => "The program with CUDA_LAUNCH_BLOCKING=1",
            Tool::Memcheck => "compute-sanitizer memcheck (leak checking for native programs)",
            Tool::Racecheck => "compute-sanitizer racecheck",
            Tool::Initcheck => "compute-sanitizer initcheck",
            Tool::Synccheck => "compute-sanitizer synccheck",
            Tool::Sanitizer => "compute-sanitizer output whose tool could not be told",
            Tool::Ncu => "Nsight Compute coalescing metrics",
            Tool::Csan => {
                "PyTorch's CUDA sanitizer (CSAN): races between streams, in Python programs that \
                 use torch"
            }
            Tool::Memory => {
                "PyTorch's allocator, watched from inside: what held the memory at an \
                 out-of-memory error, at the peak, and growth across optimizer steps"
            }
            Tool::OomRecovery => {
                "Opt-in: the program rerun with its GPU memory capped to a share of the measured \
                 peak (--oom-recovery-share): does it recover from running out?"
            }
            Tool::Coredump => {
                "The program with the CUDA driver's GPU core dump on exception, read by \
                 cuda-gdb: the faulting kernel and line at full speed (after a plain run that \
                 met a device exception)"
            }
            Tool::GlobalRace => {
                "Opt-in: races in global memory (two threads, one word, at least one writing, \
                 nothing ordering them), by cudawatch's own Sanitizer API tool"
            }
        }
    }

    /// The checklist item a stage of this kind vouches for on its own
    /// (`memcheck_clean`, "memcheck clean"), or `None` for a kind whose
    /// items are of the judge's own making (the plain run, ncu's
    /// coalescing, the OOM-recovery test) or that vouches for nothing of
    /// its own (the core dump places a failure the plain run's item
    /// already fails on). No `_ =>`: a new kind must say.
    pub fn checklist_item(self) -> Option<(&'static str, &'static str)> {
        match self {
            Tool::Memcheck => Some(("memcheck_clean", "memcheck clean")),
            Tool::Racecheck => Some(("racecheck_clean", "racecheck clean")),
            Tool::Initcheck => Some(("initcheck_clean", "initcheck clean")),
            Tool::Synccheck => Some(("synccheck_clean", "synccheck clean")),
            Tool::Csan => Some(("no_stream_races", "no races between streams")),
            Tool::Memory => Some(("no_memory_growth", "GPU memory does not grow across steps")),
            Tool::GlobalRace => Some(("no_global_races", "no races in global memory")),
            Tool::Plain | Tool::Ncu | Tool::OomRecovery | Tool::Sanitizer | Tool::Coredump => None,
        }
    }

    /// Whether a tool's saved output (`cudawatch parse`) can stand for a
    /// stage of this kind: a compute-sanitizer's or ncu's, not a program's
    /// own output (the plain run, CSAN, the memory hook, the OOM test, the
    /// core dump). No `_ =>`: a new kind must say.
    pub fn parsed_from_files(self) -> bool {
        match self {
            Tool::Memcheck
            | Tool::Racecheck
            | Tool::Initcheck
            | Tool::Synccheck
            | Tool::Sanitizer
            | Tool::Ncu
            | Tool::GlobalRace => true,
            Tool::Plain | Tool::Csan | Tool::Memory | Tool::OomRecovery | Tool::Coredump => false,
        }
    }

    /// Parses a tool name as written by [`Tool::name`]. Through the
    /// derived deserializer, whose names are `name`'s (a test holds them
    /// equal): no hand list that a new kind could be missing from (one
    /// was, and `--stages NEW` was refused while `--help` listed it).
    pub fn from_name(name: &str) -> Option<Tool> {
        use serde::de::IntoDeserializer;
        let parsed: Result<Tool, serde::de::value::Error> =
            Tool::deserialize(name.into_deserializer());
        parsed.ok().filter(|tool| tool.name() == name)
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What kind of problem a finding is. The snake_case name is also the rule id
/// used by machine formats, so it must stay stable.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A kernel read or wrote memory it does not own (memcheck `Precise`).
    InvalidAccess,
    /// A hardware exception in a kernel, e.g. a failed device assert (memcheck `Imprecise`).
    DeviceException,
    /// A thread ran out of its call stack: recursion too deep, or local
    /// arrays too large for the stack (memcheck's "Stack overflow").
    StackOverflow,
    /// The GPU's own call-return stack overflowed ("Hardware Stack
    /// Error", cudaErrorHardwareStackError).
    HardwareStackError,
    /// A kernel ran an instruction the GPU cannot execute ("Illegal
    /// Instruction"): a corrupt function pointer, code built for another GPU.
    IllegalInstruction,
    /// A kernel jumped to an address that holds no code ("Invalid PC",
    /// "Out-of-range PC"): a bad function pointer or virtual call.
    InvalidPc,
    /// An instruction used an address of a space it cannot access ("Invalid
    /// Address Space"): an atomic on local memory, a generic pointer to the
    /// wrong space.
    InvalidAddressSpace,
    /// A kernel executed a trap or breakpoint instruction ("Trace/breakpoint
    /// trap"): `__trap()`, `brkpt`, or a trap the compiler put where an
    /// operation cannot run.
    Trap,
    /// `malloc`/`free` in a kernel misused: a double free, a free of a
    /// pointer device malloc never returned, a corrupted device heap
    /// (memcheck's "Malloc/Free Error").
    DeviceHeapError,
    /// A CUDA API call returned an error.
    ApiError,
    /// Device memory allocated and never freed.
    Leak,
    /// A kernel read device memory that nothing wrote (initcheck).
    UninitializedRead,
    /// A CUDA API call (a copy or a set) read device memory that nothing
    /// wrote (initcheck's "Host API uninitialized memory access").
    UninitializedCopy,
    /// An allocation that was never used (initcheck `--track-unused-memory`).
    UnusedMemory,
    /// A barrier misused, e.g. `__syncthreads()` in divergent code (synccheck).
    BarrierError,
    /// A shared-memory race between two accesses (racecheck analysis).
    Race,
    /// Two threads of one launch touched one word of global memory, at
    /// least one writing and not atomically, with nothing ordering them
    /// (cudawatch's global-race tool).
    GlobalRace,
    /// Two kernels on different streams touch one tensor, at least one
    /// writing, with no event or wait between them (PyTorch's CSAN).
    StreamRace,
    /// Memory still allocated after each optimizer step grows step over
    /// step (cudawatch's memory stage): something keeps every step's tensors.
    MemoryGrowth,
    /// Under a memory cap below its measured peak, the program ran out of
    /// memory and did not recover (the oom-recovery stage).
    OomNotRecovered,
    /// One shared-memory hazard between two threads (racecheck hazard report).
    Hazard,
    /// A CUDA error reported by the program itself.
    CudaError,
    /// A device-side assert that failed, as the program printed it.
    DeviceAssert,
    /// The framework ran out of GPU memory.
    OutOfMemory,
    /// A cuBLAS, cuDNN, cuFFT, cuSOLVER, cuSPARSE, cuRAND or NCCL status error.
    LibraryError,
    /// The program was not built for this GPU ("no kernel image is available").
    NoKernelImage,
    /// The CUDA driver is older than the runtime or toolkit needs.
    DriverVersion,
    /// The program raised a Python exception.
    PythonException,
    /// A kernel whose global accesses waste sectors (Nsight Compute).
    UncoalescedAccess,
    /// A rank waited in a collective (NCCL all-reduce, broadcast, ...) that
    /// another rank never entered, until the process group's timeout: the
    /// ranks disagree on which collectives they run (a desync).
    CollectiveTimeout,
    /// A record of a kind cudawatch does not know yet; kept, never dropped.
    Unrecognised,
}

impl FindingKind {
    /// A fault that stops the kernel where it happens: an invalid access,
    /// a device assert or any hardware exception. What the program sees
    /// after it (a sticky CUDA error, a failed API call) follows from it.
    pub fn stops_the_kernel(&self) -> bool {
        matches!(
            self,
            FindingKind::InvalidAccess
                | FindingKind::DeviceAssert
                | FindingKind::DeviceException
                | FindingKind::StackOverflow
                | FindingKind::HardwareStackError
                | FindingKind::IllegalInstruction
                | FindingKind::InvalidPc
                | FindingKind::InvalidAddressSpace
                | FindingKind::Trap
                | FindingKind::DeviceHeapError
        )
    }

    /// The stable rule id, e.g. `invalid_access`.
    pub fn id(&self) -> &'static str {
        match self {
            FindingKind::InvalidAccess => "invalid_access",
            FindingKind::DeviceException => "device_exception",
            FindingKind::ApiError => "api_error",
            FindingKind::Leak => "leak",
            FindingKind::UninitializedRead => "uninitialized_read",
            FindingKind::UninitializedCopy => "uninitialized_copy",
            FindingKind::StackOverflow => "stack_overflow",
            FindingKind::HardwareStackError => "hardware_stack_error",
            FindingKind::IllegalInstruction => "illegal_instruction",
            FindingKind::InvalidPc => "invalid_pc",
            FindingKind::InvalidAddressSpace => "invalid_address_space",
            FindingKind::Trap => "trap",
            FindingKind::DeviceHeapError => "device_heap_error",
            FindingKind::UnusedMemory => "unused_memory",
            FindingKind::BarrierError => "barrier_error",
            FindingKind::Race => "race",
            FindingKind::GlobalRace => "global_race",
            FindingKind::StreamRace => "stream_race",
            FindingKind::MemoryGrowth => "memory_growth",
            FindingKind::OomNotRecovered => "oom_not_recovered",
            FindingKind::Hazard => "hazard",
            FindingKind::CudaError => "cuda_error",
            FindingKind::DeviceAssert => "device_assert",
            FindingKind::OutOfMemory => "out_of_memory",
            FindingKind::LibraryError => "library_error",
            FindingKind::NoKernelImage => "no_kernel_image",
            FindingKind::DriverVersion => "driver_version",
            FindingKind::PythonException => "python_exception",
            FindingKind::UncoalescedAccess => "uncoalesced_access",
            FindingKind::CollectiveTimeout => "collective_timeout",
            FindingKind::Unrecognised => "unrecognised",
        }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing (e.g. a performance hint).
    Note,
    /// Suspicious but possibly intended (e.g. warp-level racecheck warnings).
    Warning,
    /// A defect.
    Error,
}

impl Severity {
    /// Lower-case name, as serialised.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A thread or block index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dim3 {
    /// x
    pub x: u32,
    /// y
    pub y: u32,
    /// z
    pub z: u32,
}

impl std::fmt::Display for Dim3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({},{},{})", self.x, self.y, self.z)
    }
}

/// A source position.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceLocation {
    /// The file as the tool printed it (absolute in XML, base name in text).
    pub file: String,
    /// 1-based line.
    pub line: u32,
}

impl SourceLocation {
    /// `src/oob_write.cu:6` for a project file, `cuda_fp16.hpp:11` for
    /// another: for one-line summaries (the full path stays in the report).
    pub fn short(&self) -> String {
        short_place(&self.file, self.line)
    }

    /// `src/oob_write.cu:6` for a project file, the whole path for another:
    /// for tables and pages. A project file is spelled as [`Self::short`]
    /// spells it, in every format but the JSON's data.
    pub fn shown(&self) -> String {
        format!(
            "{}:{}",
            in_project(&self.file).unwrap_or(&self.file),
            self.line
        )
    }
}

/// How a report names a file of the project it was made in: from the
/// project's root, with a leading `./` (`./src/kern.cu`), so that it is
/// told apart from a bare base name a tool's text output gave (`conv.py`).
pub fn project_file(relative: &str) -> String {
    format!("./{relative}")
}

/// The path below the project's root of a file the report names as the
/// project's (`./src/kern.cu` → `src/kern.cu`); `None` for any other file.
pub fn in_project(file: &str) -> Option<&str> {
    file.strip_prefix("./")
}

/// `src/oob_write.cu:6` for a project file (below the project's root, as
/// every human format spells it), `cuda_fp16.hpp:11` for any other (its
/// base name): a frame's as a location's.
pub fn short_place(file: &str, line: u32) -> String {
    let base = in_project(file).unwrap_or_else(|| file.rsplit('/').next().unwrap_or(file));
    format!("{base}:{line}")
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One frame of a host backtrace. Python frames have a file and line and no
/// module; native frames have a module and pc.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Frame {
    /// Function name; stripped native frames have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub func: Option<String>,
    /// Shared object or executable of a native frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// Source file of a Python frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Line of a Python frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Offset of a native frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pc: Option<String>,
}

impl Frame {
    /// Whether this is a Python frame (file and line, no native module).
    pub fn is_python(&self) -> bool {
        self.module.is_none() && self.file.is_some()
    }

    /// Whether the frame belongs to the CUDA driver, runtime, libc or the
    /// compiler's launch stubs: never where a user wants to look first.
    pub fn is_runtime(&self) -> bool {
        let func = self.func.as_deref().unwrap_or("");
        let module = self.module.as_deref().unwrap_or("");
        let base = module.rsplit('/').next().unwrap_or(module);
        func.is_empty()
            || func.starts_with("cu")
            || func.starts_with("libcudart_static")
            || func.starts_with("__cudaLaunchKernel")
            || func.starts_with("__device_stub")
            || func.starts_with("__libc")
            || func == "_start"
            || base.starts_with("libcuda.so")
            || base.starts_with("libcudart.so")
            || base.starts_with("libc.so")
            || base.starts_with("libpython")
            || (self.is_python() && Frame::is_framework_python(self.file.as_deref().unwrap_or("")))
    }

    /// Whether a Python file is installed code or code a framework
    /// generated at run time, never the user's own: site-packages, the
    /// standard library, `<string>`-like pseudo files, and the caches of
    /// generated code (Inductor's `/tmp/torchinductor_<user>/`, Triton's
    /// `~/.triton/cache`).
    pub fn is_framework_python(file: &str) -> bool {
        file.contains("site-packages/")
            || file.contains("/lib/python3")
            || file.starts_with('<')
            || file.contains("/torchinductor_")
            || file.contains("/.cache/torch/")
            || file.contains("/.triton/cache/")
    }
}

impl std::fmt::Display for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let func = self.func.as_deref().unwrap_or("??");
        match (&self.file, self.line, &self.module) {
            (Some(file), Some(line), _) => write!(f, "{func} in {file}:{line}"),
            (_, _, Some(module)) => {
                let base = module.rsplit('/').next().unwrap_or(module);
                write!(f, "{func} in {base}")
            }
            _ => f.write_str(func),
        }
    }
}

/// Where an address lies relative to the allocation nearest to it, as
/// memcheck prints it. "Nearest" is a hint, not ownership: memcheck also
/// names runtime-internal allocations the program never made.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NearestAllocation {
    /// `after`, `before` or `inside`.
    pub relation: String,
    /// Bytes past the end (after) or before the start (before); 0 inside.
    pub distance: u64,
    /// Base address of the allocation.
    pub base: u64,
    /// Size of the allocation in bytes.
    pub size: u64,
}

/// One thread that hit a site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Thread index within the block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<Dim3>,
    /// Block index within the grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<Dim3>,
    /// The faulting address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
    /// Where the address lies relative to the nearest allocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest_allocation: Option<NearestAllocation>,
    /// The size of this allocation, for a leak: a site folds many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// The figures of an out-of-memory error, in bytes, as PyTorch states them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryFigures {
    /// The allocation that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tried: Option<u64>,
    /// The GPU's total capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u64>,
    /// Free on the GPU then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free: Option<u64>,
    /// In use by this process, PyTorch's and others'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_use_by_process: Option<u64>,
    /// Allocated by PyTorch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocated: Option<u64>,
    /// Reserved by PyTorch's allocator but unallocated (fragmentation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_unallocated: Option<u64>,
    /// PyTorch suggested `expandable_segments` against fragmentation.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fragmentation_hint: bool,
}

/// The second access of a race: racecheck reports pairs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OtherAccess {
    /// `Read` or `Write`.
    pub access: String,
    /// Where it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    /// Offset in the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pc: Option<String>,
}

/// A few source lines around a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snippet {
    /// The number of the first line in `lines`.
    pub first_line: u32,
    /// The lines, without their line endings.
    pub lines: Vec<String>,
}

/// Findings grouped by site: every record with the same identity folds into
/// one `Site` with a count, so 1000 per-thread records become one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Site {
    /// Stable identity: survives address, thread and run changes, so
    /// baselines and suppressions can name it.
    pub id: String,
    /// Which tool found it.
    pub tool: Tool,
    /// What kind of problem it is.
    pub kind: FindingKind,
    /// How bad it is.
    pub severity: Severity,
    /// One line saying what happened.
    pub message: String,
    /// The kernel, as the tool named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// The kernel's full signature (namespaces, template arguments) when
    /// the tool's text log gave it and its XML gave only the bare name
    /// (`nhwcToNchwKernel` there, `void cudnn::engines_precompiled::
    /// nhwcToNchwKernel<...>(...)` in the text): what says whose kernel it
    /// is when a record has no host call stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_signature: Option<String>,
    /// Source position of the faulting instruction or failing call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    /// The lines around `location`, read where the report was made, so a
    /// report rendered on another machine still shows the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<Snippet>,
    /// Offset of the instruction in the kernel (the first one seen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pc: Option<String>,
    /// Every instruction offset folded into this site, when there are
    /// several on its one line (an unrolled loop).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcs: Vec<String>,
    /// Where the tool placed the finding when that was a function inlined
    /// into the user's code (`__syncwarp` in `sm_30_intrinsics.hpp:110`):
    /// `location` is then the user's line that called it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inlined: Option<Frame>,
    /// The temporary file a kernel compiled at run time was compiled from
    /// (CuPy's `/tmp/tmpXXXX/<hash>.cubin.cu`) and the line there, when
    /// `location` was moved to the user's Python line holding the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_source: Option<SourceLocation>,
    /// How many records folded into this site.
    pub count: u64,
    /// The count is a lower bound: the tool dropped records of this run
    /// (compute-sanitizer without call stacks keeps the first 256 records
    /// of each launch and counts the rest as "skipped").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count_at_least: bool,
    /// The first few threads that hit it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Sample>,
    /// The other side of a race.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<OtherAccess>,
    /// Bytes involved (leaks, unused allocations, OOM requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Hazards behind a racecheck analysis record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hazards: Option<u64>,
    /// The error name, e.g. `cudaErrorIllegalAddress` or `CUBLAS_STATUS_INVALID_VALUE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The innermost Python frame in the user's own code, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_frame: Option<Frame>,
    /// The innermost native frame outside the CUDA runtime and libc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_frame: Option<Frame>,
    /// Set when the launching frame (`python_frame` or `launch_frame`) is
    /// not from this finding's tool, whose record had none, but where that
    /// tool (ncu) saw every profiled launch of the same kernel launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_seen_by: Option<Tool>,
    /// The whole host backtrace of the first record, innermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_frames: Vec<Frame>,
    /// Set when a second run of the stage with host call stacks saw this
    /// site's records and kept no host stack for them either: launched
    /// where no thread of the program's had a Python line (initcheck's
    /// records of autograd's backward thread, H200, 2026-11-29), not for
    /// want of a stack.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stackless_with_stacks: bool,
    /// Set when a second run of initcheck with every tensor PyTorch
    /// allocates filled (`torch.use_deterministic_algorithms`, whose
    /// `fill_uninitialized_memory` writes each new tensor) read this
    /// site's memory uninitialised too: memory no tensor holds, a
    /// framework kernel's own scratch (ATen's reduction reads the unused
    /// lanes of its staging buffer, tests/gpu/real/train_tabular.py).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_with_tensors_filled: bool,
    /// Fields of the tool's record that cudawatch does not interpret.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrecognised: Vec<(String, String)>,
    /// Set when a suppression rule matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppressed: Option<String>,
    /// The site was already in the `--baseline` report, so it does not fail
    /// the gate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_baseline: bool,
    /// The severity the tool gave, when cudawatch judged the finding more
    /// severe (a warp-level race racecheck calls a warning is a real bug in
    /// the user's kernel on sm_70 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_severity: Option<Severity>,
    /// Why the tool's record may not be a bug at all: the tool cannot see
    /// something this run did (initcheck does not see the stores of
    /// cuBLAS's and cuDNN's Hopper kernels, nor of launches it was told not
    /// to check, so a read of their output looks uninitialised). Set when the report is judged; such a read in a
    /// framework or library kernel does not gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubt: Option<String>,
    /// Whose code it happened in, and why cudawatch thinks so (set when
    /// the report is judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Ownership>,
    /// An out-of-memory error's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryFigures>,
    /// The test that was running when the tool reported it, in a CI log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// The processes of a multi-process program it was seen in (rank, pid,
    /// GPU, where known), first seen first; empty when the tool could not
    /// tell one process from another.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<crate::ProcessRef>,
    /// The other stages that saw this same fault, in plan order (memcheck's
    /// "Warp assert" record of the program's assert, the GPU core dump's
    /// view of a sanitizer's invalid access): the root cause names them,
    /// and their own sites follow from it (`judge::consequences`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen_by: Vec<Tool>,
    /// Set when only an earlier try of its stage saw it (`crashed/memcheck`:
    /// compute-sanitizer died after printing it, and the rerun did not
    /// reach it): the folder and why that try ran again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_in_try: Option<String>,
    /// The id of the root-cause site this one follows from (the 719s after
    /// an invalid access, the leaks of a process that bailed out, the same
    /// error seen by another tool); set when the report is judged. Such a
    /// site is shown under its root and never gates on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consequence_of: Option<String>,
    /// What `cudawatch explain` and `docs/errors.md` explain this finding
    /// under: its error code when it names one (`cudaErrorAssert`), else
    /// its kind (`invalid_access`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<String>,
}

impl Site {
    /// The count as a person reads it: `256+` when it is a lower bound.
    pub fn count_text(&self) -> String {
        if self.count_at_least {
            format!("{}+", self.count)
        } else {
            self.count.to_string()
        }
    }
}

/// Whose code a finding is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// The user's kernels and files, their extensions and Triton kernels.
    User,
    /// PyTorch (ATen, c10), Inductor-generated kernels, CuPy, the Triton runtime.
    Framework,
    /// NVIDIA's libraries: cuDNN, cuBLAS, CUTLASS/FMHA, cuRAND, NCCL, cuFFT, ...
    Library,
}

impl Owner {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Owner::User => "user",
            Owner::Framework => "framework",
            Owner::Library => "library",
        }
    }
}

/// A finding's owner, the component it names, and the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ownership {
    /// Whose code.
    pub owner: Owner,
    /// The component: `cuDNN`, `PyTorch ATen`, `Inductor`, or `user`.
    pub component: String,
    /// Why, in a few words (`kernel name cudnn::…`, `launched from libtorch_cuda.so`).
    pub because: String,
    /// The innermost Python frame is the user's own line: the user's call
    /// launched the kernel directly (e.g. `buf.sum()` on memory never written).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub user_call: bool,
}

#[cfg(test)]
mod tests {
    use super::Tool;

    #[test]
    fn every_stage_name_round_trips_and_nothing_else_parses() {
        for tool in Tool::STAGES.iter().chain(&[Tool::Sanitizer]) {
            assert_eq!(Tool::from_name(tool.name()), Some(*tool), "{tool:?}");
        }
        for name in ["", "oom_recovery", "Memcheck", "memcheck ", "all"] {
            assert_eq!(Tool::from_name(name), None, "{name:?}");
        }
    }

    #[test]
    fn the_default_stages_are_all_but_the_opt_in_recovery_test() {
        let all: Vec<Tool> = Tool::STAGES
            .into_iter()
            .filter(|s| ![Tool::OomRecovery, Tool::GlobalRace].contains(s))
            .collect();
        assert_eq!(Tool::DEFAULT_STAGES.to_vec(), all);
    }
}
