//! compute-sanitizer output: the XML written by `--xml --save` and the text
//! printed on stdout. Both become [`Record`]s, one per tool record.
//!
//! The XML is the primary source (full paths, full stacks) but carries no
//! counts and no summary, is written only when the tool exits, and is cut at
//! `--print-limit`. The text carries the summary lines, the distance to the
//! nearest allocation, and survives a killed run. cudawatch reads both.

pub mod fold;
pub mod inlined;
pub mod text;
pub mod xml;

use crate::model::{Dim3, Frame, NearestAllocation, Severity, SourceLocation, Tool};

/// What compute-sanitizer says, once per launch, when its error buffer
/// overflowed and it dropped records (a warning record in the XML and the
/// text). Seen without call stacks (`--show-backtrace no`): each launch
/// keeps its first 256 records, and the summary then adds "N errors were
/// skipped (error buffer overflow)" (sample-reports/beyond/floods-*).
/// Records were dropped, not checks skipped: the tool's failure, never.
pub const BUFFER_OVERFLOW: &str = "Error buffer overflow has been detected";

/// How memcheck's device-heap errors begin, in the XML's text and (with
/// " :" after it) in the text output.
pub const HEAP_ERROR: &str = "Malloc/Free Error encountered";

/// The record kinds compute-sanitizer 2025.3 writes (`<kind>` in the XML).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RecordKind {
    /// memcheck: an invalid access with a precise location.
    Precise,
    /// memcheck: a hardware exception (device assert, illegal instruction).
    Imprecise,
    /// Any tool: a CUDA API call returned an error.
    Api,
    /// memcheck `--leak-check full`: an allocation never freed.
    Leak,
    /// initcheck: a read of uninitialised global memory.
    Initcheck,
    /// initcheck: a CUDA API call (`cudaMemcpy`'s source) read memory
    /// nothing wrote (`InitcheckApiError`, "Host API uninitialized memory
    /// access"), one record per 32 bytes.
    InitcheckApi,
    /// memcheck: a thread ran out of call stack (`StackOverflow`).
    StackOverflow,
    /// memcheck: `malloc`/`free` in a kernel misused (`<kind>Syscall</kind>`
    /// with "Malloc/Free Error encountered: Device-side double free").
    HeapError,
    /// initcheck `--track-unused-memory`.
    UnusedMemory,
    /// synccheck: a barrier error.
    Synccheck,
    /// racecheck `analysis` report: an aggregated race.
    Analysis,
    /// racecheck `hazard` report: one hazard between two threads.
    Hazard,
    /// The tool's own failure (`<kind>Sanitizer</kind>`, "Internal
    /// Sanitizer Error: ... didn't track the launch"): what it could not
    /// check, never a finding in the program.
    ToolError,
    /// A kind this version of cudawatch does not know.
    Other(String),
}

impl RecordKind {
    /// Reads the `<kind>` text and the record's `<what><text>`: memcheck's
    /// device-heap errors are `Syscall` records, a kind other records may
    /// share, so the text says which.
    pub fn from_xml_text(kind: &str, text: &str) -> RecordKind {
        if kind == "Syscall" && text.starts_with(HEAP_ERROR) {
            RecordKind::HeapError
        } else {
            RecordKind::from_xml(kind)
        }
    }

    /// Reads the `<kind>` text.
    pub fn from_xml(kind: &str) -> RecordKind {
        match kind {
            "Precise" => RecordKind::Precise,
            "Imprecise" => RecordKind::Imprecise,
            "Api" => RecordKind::Api,
            "Leak" => RecordKind::Leak,
            "Initcheck" => RecordKind::Initcheck,
            "InitcheckApiError" => RecordKind::InitcheckApi,
            "StackOverflow" => RecordKind::StackOverflow,
            "UnusedMemory" => RecordKind::UnusedMemory,
            "Synccheck" => RecordKind::Synccheck,
            "Analysis" => RecordKind::Analysis,
            "Hazard" => RecordKind::Hazard,
            "Sanitizer" => RecordKind::ToolError,
            other => RecordKind::Other(other.to_string()),
        }
    }

    /// The tool that writes this kind, if only one does (`Api` records come
    /// from every tool).
    pub fn tool(&self) -> Option<Tool> {
        match self {
            RecordKind::Precise
            | RecordKind::Imprecise
            | RecordKind::Leak
            | RecordKind::StackOverflow
            | RecordKind::HeapError => Some(Tool::Memcheck),
            RecordKind::Initcheck | RecordKind::UnusedMemory | RecordKind::InitcheckApi => {
                Some(Tool::Initcheck)
            }
            RecordKind::Synccheck => Some(Tool::Synccheck),
            RecordKind::Analysis | RecordKind::Hazard => Some(Tool::Racecheck),
            RecordKind::Api | RecordKind::ToolError | RecordKind::Other(_) => None,
        }
    }
}

/// An API error: the call, the error name and code, and its message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiCall {
    /// `cudaDeviceSynchronize`, `cuGetProcAddress`, ...
    pub api: String,
    /// `cudaErrorLaunchFailure`, ...
    pub error: String,
    /// The numeric code.
    pub code: Option<i64>,
    /// `unspecified launch failure`, ...
    pub message: String,
}

/// The other access of a race or hazard.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Access {
    /// `Read` or `Write`.
    pub direction: String,
    /// Kernel name.
    pub func: Option<String>,
    /// Source position.
    pub location: Option<SourceLocation>,
    /// Offset in the kernel.
    pub pc: Option<String>,
    /// Thread (hazard reports only).
    pub thread: Option<Dim3>,
}

/// One compute-sanitizer record, normalised across XML and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// What kind of record.
    pub kind: RecordKind,
    /// `Error` or `Warning` (racecheck warp-level hazards are warnings).
    pub severity: Severity,
    /// The tool's own one-line description.
    pub text: String,
    /// Kernel (simple name in XML, full signature in text).
    pub func: Option<String>,
    /// Source position.
    pub location: Option<SourceLocation>,
    /// Offset of the instruction.
    pub pc: Option<String>,
    /// Faulting thread.
    pub thread: Option<Dim3>,
    /// Its block.
    pub block: Option<Dim3>,
    /// Address accessed, leaked or left unused.
    pub address: Option<u64>,
    /// Bytes: access size, leak size or allocation size.
    pub size: Option<u64>,
    /// `out of bounds`, `misaligned`, barrier error type, hazard type, exception name.
    pub detail: Option<String>,
    /// Text output only: where the address lies relative to the nearest allocation.
    pub nearest_allocation: Option<NearestAllocation>,
    /// API errors.
    pub api: Option<ApiCall>,
    /// Races and hazards: the first access (the record's own position is the second's).
    pub first_access: Option<Access>,
    /// Racecheck analysis: how many hazards the race stands for.
    pub hazards: Option<u64>,
    /// Host backtrace, innermost first, Python frames after native ones.
    pub host_frames: Vec<Frame>,
    /// Device backtrace (`<deviceStack>`, `Device Frame:`), innermost first:
    /// the functions the faulting instruction was inlined into, the kernel
    /// last. Present when the record's position is an inlined function.
    pub device_frames: Vec<Frame>,
    /// Where the tool placed the record before cudawatch moved it to the
    /// user's line: the inlined function (`__syncwarp`) and its header.
    pub inlined: Option<Frame>,
    /// Elements cudawatch does not interpret, as `path = value`.
    pub unrecognised: Vec<(String, String)>,
    /// The test that was running, in a CI log (pytest, gtest, ctest).
    pub test: Option<String>,
}

impl Record {
    pub(crate) fn new(kind: RecordKind) -> Record {
        Record {
            kind,
            severity: Severity::Error,
            text: String::new(),
            func: None,
            location: None,
            pc: None,
            thread: None,
            block: None,
            address: None,
            size: None,
            detail: None,
            nearest_allocation: None,
            api: None,
            first_access: None,
            hazards: None,
            host_frames: Vec::new(),
            device_frames: Vec::new(),
            inlined: None,
            unrecognised: Vec::new(),
            test: None,
        }
    }
}

/// Reads `0x7f9e30800fa0` or `4,000` or `42`.
pub(crate) fn parse_u64(text: &str) -> Option<u64> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok();
    }
    let digits: String = t.chars().filter(|c| *c != ',').collect();
    digits.parse().ok()
}

/// Reads `(232,0,0)` or `232, 0, 0`.
pub(crate) fn parse_dim3(text: &str) -> Option<Dim3> {
    let inner = text.trim().trim_start_matches('(').trim_end_matches(')');
    let mut it = inner.split(',').map(|p| p.trim().parse::<u32>());
    let dim = Dim3 {
        x: it.next()?.ok()?,
        y: it.next()?.ok()?,
        z: it.next()?.ok()?,
    };
    it.next().is_none().then_some(dim)
}
