//! The one report model: what every parser produces and every renderer reads.
//!
//! A [`Report`] is serialised as cudawatch's JSON output and read back by
//! `cudawatch report`, so its shape is a contract: fields are only added, and
//! [`SCHEMA_VERSION`] is bumped when a field's meaning changes. The JSON schema
//! is documented in `docs/report-schema.md`.

use serde::{Deserialize, Serialize};

/// Version of the JSON report's shape.
pub const SCHEMA_VERSION: u32 = 1;

/// How many thread/block samples a site keeps; the count keeps counting.
pub const MAX_SAMPLES: usize = 5;

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
        }
    }

    /// The compute-sanitizer tools, in the order cudawatch runs them.
    pub const SANITIZERS: [Tool; 4] = [
        Tool::Memcheck,
        Tool::Racecheck,
        Tool::Initcheck,
        Tool::Synccheck,
    ];

    /// Parses a tool name as written by [`Tool::name`].
    pub fn from_name(name: &str) -> Option<Tool> {
        [
            Tool::Plain,
            Tool::Memcheck,
            Tool::Racecheck,
            Tool::Initcheck,
            Tool::Synccheck,
            Tool::Sanitizer,
            Tool::Ncu,
        ]
        .into_iter()
        .find(|t| t.name() == name)
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
    /// A CUDA API call returned an error.
    ApiError,
    /// Device memory allocated and never freed.
    Leak,
    /// A kernel read device memory that nothing wrote (initcheck).
    UninitializedRead,
    /// An allocation that was never used (initcheck `--track-unused-memory`).
    UnusedMemory,
    /// A barrier misused, e.g. `__syncthreads()` in divergent code (synccheck).
    BarrierError,
    /// A shared-memory race between two accesses (racecheck analysis).
    Race,
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
    /// A record of a kind cudawatch does not know yet; kept, never dropped.
    Unrecognised,
}

impl FindingKind {
    /// The stable rule id, e.g. `invalid_access`.
    pub fn id(&self) -> &'static str {
        match self {
            FindingKind::InvalidAccess => "invalid_access",
            FindingKind::DeviceException => "device_exception",
            FindingKind::ApiError => "api_error",
            FindingKind::Leak => "leak",
            FindingKind::UninitializedRead => "uninitialized_read",
            FindingKind::UnusedMemory => "unused_memory",
            FindingKind::BarrierError => "barrier_error",
            FindingKind::Race => "race",
            FindingKind::Hazard => "hazard",
            FindingKind::CudaError => "cuda_error",
            FindingKind::DeviceAssert => "device_assert",
            FindingKind::OutOfMemory => "out_of_memory",
            FindingKind::LibraryError => "library_error",
            FindingKind::NoKernelImage => "no_kernel_image",
            FindingKind::DriverVersion => "driver_version",
            FindingKind::PythonException => "python_exception",
            FindingKind::UncoalescedAccess => "uncoalesced_access",
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
            || (self.is_python() && is_library_python_file(self.file.as_deref().unwrap_or("")))
    }
}

fn is_library_python_file(file: &str) -> bool {
    file.contains("site-packages/") || file.contains("/lib/python3") || file.starts_with('<')
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
    /// Source position of the faulting instruction or failing call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    /// The lines around `location`, read where the report was made, so a
    /// report rendered on another machine still shows the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<Snippet>,
    /// Offset of the instruction in the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pc: Option<String>,
    /// How many records folded into this site.
    pub count: u64,
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
    /// The whole host backtrace of the first record, innermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_frames: Vec<Frame>,
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
}

/// Sectors and requests of one direction (loads or stores) of one kernel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AccessStats {
    /// Warp-level requests (`l1tex__t_requests_pipe_lsu_mem_global_op_*.sum`).
    pub requests: Option<f64>,
    /// 32-byte sectors (`l1tex__t_sectors_pipe_lsu_mem_global_op_*.sum`).
    pub sectors: Option<f64>,
    /// Share of each fetched sector the threads used, in percent.
    pub bytes_used_pct: Option<f64>,
}

impl AccessStats {
    /// Sectors per request, when both were measured and requests were made.
    pub fn sectors_per_request(&self) -> Option<f64> {
        match (self.sectors, self.requests) {
            (Some(s), Some(r)) if r > 0.0 => Some(s / r),
            _ => None,
        }
    }
}

/// Global-memory coalescing of one profiled kernel launch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelCoalescing {
    /// ncu's launch ID within its report.
    pub launch_id: u64,
    /// Demangled kernel name.
    pub kernel: String,
    /// Grid size, e.g. `(16384, 1, 1)`.
    pub grid: String,
    /// Block size, e.g. `(256, 1, 1)`.
    pub block: String,
    /// Global loads.
    pub load: AccessStats,
    /// Global stores.
    pub store: AccessStats,
    /// Kernel duration in nanoseconds.
    pub duration_ns: Option<f64>,
    /// Sectors per request a fully coalesced access of this kernel's widest
    /// access size would need (4 for 4-byte accesses, 16 for 16-byte ones).
    pub ideal_sectors_per_request: Option<f64>,
    /// Sectors moved beyond the ideal (SourceCounters).
    pub excessive_sectors: Option<f64>,
    /// All global sectors the kernel moved (SourceCounters).
    pub total_sectors: Option<f64>,
}

impl KernelCoalescing {
    /// Share of sectors that were wasted, in percent.
    pub fn excessive_pct(&self) -> Option<f64> {
        match (self.excessive_sectors, self.total_sectors) {
            (Some(e), Some(t)) if t > 0.0 => Some(100.0 * e / t),
            _ => None,
        }
    }
}

/// Wasted sectors attributed to one source line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineSectors {
    /// The kernel the line belongs to.
    pub kernel: String,
    /// Where it is.
    pub location: SourceLocation,
    /// The line's text, as ncu imported it.
    pub source: String,
    /// `Load`, `Store` or both.
    pub access: String,
    /// Sectors beyond the ideal.
    pub excessive_sectors: f64,
    /// Sectors the line's accesses need at their pattern.
    pub theoretical_sectors: f64,
    /// Sectors a coalesced pattern would need.
    pub ideal_sectors: f64,
}

impl LineSectors {
    /// Share of the line's sectors beyond the ideal, in percent.
    pub fn excessive_pct(&self) -> Option<f64> {
        (self.theoretical_sectors > 0.0)
            .then(|| 100.0 * self.excessive_sectors / self.theoretical_sectors)
    }
}

/// The summary lines a tool printed: the numbers the XML does not carry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSummary {
    /// `ERROR SUMMARY: N errors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    /// `N errors were not printed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_printed: Option<u64>,
    /// `LEAK SUMMARY: B bytes leaked in K allocations`: (B, K).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaked: Option<(u64, u64)>,
    /// `RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)`: (H, E, W).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub racecheck: Option<(u64, u64, u64)>,
    /// Tool lines that say the check did not really happen, verbatim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// `Target application returned an error`.
    #[serde(default)]
    pub target_failed: bool,
    /// ncu printed `No kernels were profiled`.
    #[serde(default)]
    pub no_kernels_profiled: bool,
    /// Kernel launches ncu said it profiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels_profiled: Option<u64>,
}

impl ToolSummary {
    /// Whether any summary line was seen at all: a sanitizer run that
    /// printed none did not finish.
    pub fn has_closing_line(&self) -> bool {
        self.errors.is_some() || self.racecheck.is_some()
    }
}

/// One input that went into the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Path as given.
    pub path: String,
    /// What cudawatch took it for.
    pub kind: InputKind,
    /// The tool it belongs to.
    pub tool: Tool,
    /// Records or rows read from it.
    pub records: u64,
}

/// The kinds of file cudawatch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// compute-sanitizer `--xml --save` output.
    SanitizerXml,
    /// compute-sanitizer text output (stdout or `--log-file`).
    SanitizerText,
    /// `ncu --import --csv --page raw`.
    NcuRaw,
    /// `ncu --import --csv --page details`.
    NcuDetails,
    /// `ncu --import --csv --page source --print-source cuda,sass`.
    NcuSource,
    /// ncu's own console output (`==PROF==` lines).
    NcuLog,
    /// A program's stderr or stdout.
    ProgramOutput,
}

/// Something that limits what the report can be trusted for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// The file or stage it is about.
    pub source: String,
    /// One line a user can act on.
    pub message: String,
}

/// How a stage ended, ranked from best to worst for the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The stage ran and found nothing.
    Clean,
    /// The stage was not run (not selected, or the run stopped first).
    Skipped,
    /// The target program failed on its own (plain run), with nothing else to say.
    TargetFailed,
    /// The stage ran and found problems.
    Findings,
    /// The stage could not really check anything: the tool is missing, never
    /// attached, timed out, or left truncated output. Never clean.
    Inconclusive,
    /// The tool itself broke (bad flags, crashed).
    ToolFailed,
}

impl Outcome {
    /// Lower-case name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Clean => "clean",
            Outcome::Skipped => "skipped",
            Outcome::TargetFailed => "target failed",
            Outcome::Findings => "findings",
            Outcome::Inconclusive => "inconclusive",
            Outcome::ToolFailed => "tool failed",
        }
    }
}

/// How a process ended, as data rather than a platform `ExitStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", content = "code", rename_all = "snake_case")]
pub enum ProcessEnd {
    /// Exit code.
    Exited(i32),
    /// Killed by this signal number.
    Signaled(i32),
    /// Never started (the tool could not be spawned).
    NotStarted,
}

impl std::fmt::Display for ProcessEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessEnd::Exited(code) => write!(f, "exit {code}"),
            ProcessEnd::Signaled(sig) => write!(f, "signal {sig}"),
            ProcessEnd::NotStarted => f.write_str("not started"),
        }
    }
}

/// One stage of a run, as the report tells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageReport {
    /// The tool of the stage.
    pub tool: Tool,
    /// How it ended.
    pub outcome: Outcome,
    /// Why, in one line a user can act on.
    pub reason: String,
    /// The process's end, if it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<ProcessEnd>,
    /// Wall time in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// The command line, as run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Environment cudawatch set for this stage, `NAME=value`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// The summary lines the tool printed.
    #[serde(default)]
    pub summary: ToolSummary,
    /// Raw artifacts kept for this stage, relative to the run directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// Peak GPU memory used during the stage, in MiB, and the total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_mib: Option<(u64, u64)>,
}

/// The combined report of every tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// See [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// cudawatch's version.
    pub cudawatch_version: String,
    /// The program that was run, if this report is of a run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target: Vec<String>,
    /// The stages of the run, in order; empty for `cudawatch parse`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageReport>,
    /// Every file that went into the report.
    pub inputs: Vec<Input>,
    /// Findings grouped by site, worst first.
    pub findings: Vec<Site>,
    /// Coalescing per profiled kernel launch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coalescing: Vec<KernelCoalescing>,
    /// Source lines that waste the most sectors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wasteful_lines: Vec<LineSectors>,
    /// What limits trust in this report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// The pre-deployment checklist, judged from everything above (runs only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checklist: Vec<ChecklistItem>,
    /// The user stopped the run (Ctrl-C, SIGTERM): later stages did not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl Report {
    /// An empty report of this cudawatch version.
    pub fn new(cudawatch_version: &str) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            cudawatch_version: cudawatch_version.to_string(),
            target: Vec::new(),
            stages: Vec::new(),
            inputs: Vec::new(),
            findings: Vec::new(),
            coalescing: Vec::new(),
            wasteful_lines: Vec::new(),
            warnings: Vec::new(),
            checklist: Vec::new(),
            interrupted: false,
        }
    }
}

/// One pre-deployment check and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChecklistItem {
    /// Stable id, e.g. `memcheck_clean`.
    pub id: String,
    /// What is checked, for people.
    pub title: String,
    /// The verdict.
    pub status: CheckStatus,
    /// Why, in one line.
    pub evidence: String,
}

/// A checklist verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Checked and fine.
    Pass,
    /// Checked and not fine.
    Fail,
    /// Could not be checked: its stage ran but was inconclusive, the run
    /// was interrupted first, or there was no data.
    Inconclusive,
    /// Not checked because its stage was not selected (`--stages`): a
    /// choice, not a failure, and never a pass.
    Skipped,
}

impl CheckStatus {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "fail",
            CheckStatus::Inconclusive => "inconclusive",
            CheckStatus::Skipped => "skipped",
        }
    }
}
