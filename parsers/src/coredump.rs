//! The GPU core dump, as cuda-gdb reads it back and as the driver words its
//! progress while writing it (`sample-reports/coredump/`).
//!
//! cuda-gdb (`-batch -ex "target cudacore DUMP" -ex "info cuda kernels"
//! -ex bt`) prints, for a fault:
//!
//! ```text
//! [Current focus set to CUDA kernel 0, grid 30, block (16,0,0), thread (224,0,0), device 0, sm 2, warp 6, lane 0]
//! CUDA Exception: Warp Invalid Address Space
//! The exception was triggered at PC 0x7f3b137ace10  scatter(int const*, float const*, float*, int)  (graph_wild_index.cu:15)
//! #0  scatter<<<(256,1,1),(256,1,1)>>> () at /work/main/tests/gpu/coredump/graph_wild_index.cu:16
//! ```
//!
//! The exception's line (15) is the faulting instruction; the frame's line
//! (16) is not (seen on the H100: it is where the warp stopped). A device
//! assert prints `Assertion failed.` in place of the two exception lines,
//! and the program's own assert message (in its stderr) has the line.
//!
//! With `CUDA_COREDUMP_SHOW_PROGRESS=1` the driver prints, before writing,
//! the exception and the faulting function's mangled name:
//! `coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)`,
//! `coredump:   - Device: 0`, `coredump:   #0<TAB>0x7f10277b18f0<TAB>gather`.
//! That is what is left when no reader could read the dump.

use crate::model::{Dim3, Sample, Severity, Site, SourceLocation, Tool};
use crate::site::new_site;

/// What one dump says about the fault.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fault {
    /// As cuda-gdb names it (`Warp Illegal Address`, `Assertion failed`).
    pub exception: String,
    /// The kernel's name as the reader printed it (demangled), or the
    /// driver's mangled one.
    pub kernel: Option<String>,
    /// The faulting instruction's source line, when the kernel was built
    /// with line information.
    pub location: Option<SourceLocation>,
    /// The faulting thread and block.
    pub thread: Option<Dim3>,
    /// Its block.
    pub block: Option<Dim3>,
    /// The grid's and block's shape (`(256,1,1),(256,1,1)`).
    pub launch_shape: Option<String>,
    /// The GPU, as the dump numbers it.
    pub device: Option<String>,
    /// The faulting PC.
    pub pc: Option<String>,
}

/// Reads cuda-gdb's output for one dump; `None` when it names no fault
/// (the reader failed, or the dump held none).
pub fn read_reader(text: &str) -> Option<Fault> {
    let mut fault = Fault::default();
    let mut exception_file: Option<(String, u32)> = None;
    let mut frame_path: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("[Current focus set to CUDA kernel") {
            fault.block = dim_after(rest, "block ");
            fault.thread = dim_after(rest, "thread ");
            fault.device = word_after(rest, "device ");
        } else if let Some(name) = line.strip_prefix("CUDA Exception:") {
            fault.exception = name.trim().to_string();
        } else if line == "Assertion failed." {
            fault.exception = "Assertion failed".into();
        } else if let Some(rest) = line.strip_prefix("The exception was triggered at PC ") {
            let mut parts = rest.split("  ").map(str::trim).filter(|p| !p.is_empty());
            fault.pc = parts.next().map(str::to_string);
            if let Some(function) = parts.next() {
                fault.kernel.get_or_insert_with(|| function.to_string());
            }
            exception_file = parts.next().and_then(file_line_in_parens);
        } else if line.starts_with("#0 ")
            && fault.launch_shape.is_none()
            && let Some((kernel, shape, path)) = frame(line)
        {
            // The exception line's name has the arguments; the frame's is
            // the one for a kernel without line information.
            if fault.kernel.is_none() {
                fault.kernel = Some(kernel);
            }
            fault.launch_shape = shape;
            frame_path = path;
        }
    }
    if fault.exception.is_empty() {
        return None;
    }
    fault.location = match (exception_file, frame_path) {
        // The exception names the file's base name; the frame has its path.
        (Some((file, line)), Some(path)) if path.rsplit('/').next() == Some(file.as_str()) => {
            Some(SourceLocation { file: path, line })
        }
        (Some((file, line)), _) => Some(SourceLocation { file, line }),
        _ => None,
    };
    Some(fault)
}

/// Reads the driver's progress lines (a program's stderr): the faults it
/// wrote dumps of, each with the dump's path, in the order written.
pub fn read_progress(text: &str) -> Vec<(Fault, Option<String>)> {
    let mut faults: Vec<(Fault, Option<String>)> = Vec::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once("coredump:") else {
            continue;
        };
        let rest = rest.trim();
        if let Some(kind) = rest.strip_prefix("Detected an exception of type ") {
            let code = kind.split_whitespace().next().unwrap_or(kind);
            let exception = exception_title(code);
            faults.push((
                Fault {
                    exception,
                    ..Fault::default()
                },
                None,
            ));
            continue;
        }
        let Some((fault, path)) = faults.last_mut() else {
            continue;
        };
        if let Some(device) = rest.strip_prefix("- Device:") {
            fault.device = Some(device.trim().to_string());
        } else if let Some(pc) = rest.strip_prefix("- PC ") {
            fault.pc = Some(pc.trim().to_string());
        } else if let Some(frame) = rest.strip_prefix("#0") {
            fault.kernel = frame
                .split('\t')
                .map(str::trim)
                .rfind(|p| !p.is_empty())
                .map(unmangled);
        } else if let Some(file) = rest.strip_prefix("Writing ELF file to ") {
            *path = Some(file.trim().to_string());
        }
    }
    faults
}

/// The bare name in a mangled kernel name, as compute-sanitizer's records
/// and a device assert's message name kernels: `_Z7scatterPKiPKfPfi` →
/// `scatter`, and in a namespace (`_ZN2at6native24vectorized_gather_kernelILi16ElEEvPc...`,
/// seen for ATen's assert on the H100) the last name before its template
/// arguments → `vectorized_gather_kernel`. Any other name as it is (a
/// Triton kernel's is not mangled).
fn unmangled(name: &str) -> String {
    crate::mangled::function_path(name)
        .and_then(|path| path.last().copied())
        .map_or_else(|| name.to_string(), str::to_string)
}

/// `CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS` as cuda-gdb words it: `Warp
/// Illegal Address`.
fn exception_title(code: &str) -> String {
    let words = code.strip_prefix("CUDBG_EXCEPTION_").unwrap_or(code);
    words
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let lower = w.to_ascii_lowercase();
            let mut chars = lower.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The CUDA error of an exception as a core dump names it (`Warp Illegal
/// Address`, `CUDA Exception: Warp Misaligned Address`,
/// `CUDBG_EXCEPTION_WARP_ASSERT`, `Assertion failed.`); `None` for text
/// that is not such a name.
pub fn exception_error(text: &str) -> Option<&'static str> {
    let t = text.trim().trim_end_matches('.');
    let t = t.strip_prefix("CUDA Exception:").unwrap_or(t).trim();
    let name = if t.starts_with("CUDBG_EXCEPTION_") {
        exception_title(t.split_whitespace().next().unwrap_or(t))
    } else {
        t.to_string()
    };
    let lower = name.to_ascii_lowercase();
    let is_exception = (lower.starts_with("warp ") || lower.starts_with("lane "))
        && !lower.contains(char::is_numeric)
        || lower == "assertion failed";
    is_exception.then(|| classify(&name).1)
}

/// The finding kind and CUDA error of an exception, by its name.
pub use crate::exceptions::classify;

/// The finding of one dump's fault, in the process `pid` wrote it from.
pub fn site(fault: &Fault, dump: &str) -> Site {
    let (kind, error) = classify(&fault.exception);
    let kernel = fault.kernel.as_deref().map(kernel_name);
    let message = match &kernel {
        Some(k) => format!("GPU core dump: {} in {k}", fault.exception),
        None => format!("GPU core dump: {}", fault.exception),
    };
    let mut site = new_site(Tool::Coredump, kind, Severity::Error, message);
    site.kernel_signature = fault
        .kernel
        .as_deref()
        .filter(|k| k.contains('('))
        .map(str::to_string);
    site.kernel = kernel;
    site.location = fault.location.clone();
    site.pc = fault.pc.clone();
    site.error = Some(error.to_string());
    site.explain = Some(error.to_string());
    if fault.thread.is_some() || fault.block.is_some() {
        site.samples.push(Sample {
            thread: fault.thread,
            block: fault.block,
            address: None,
            nearest_allocation: None,
            bytes: None,
        });
    }
    site.unrecognised.push(("dump".into(), dump.to_string()));
    if let Some(shape) = &fault.launch_shape {
        site.unrecognised.push(("launch".into(), shape.clone()));
    }
    // One id per kernel and line, not per PC: the same fault in two
    // processes (or two runs, where the PC moves) is one site.
    let pc = site.pc.take();
    site.id = crate::site::site_id(&site, "coredump");
    site.pc = pc;
    site
}

/// A kernel's name as compute-sanitizer's records give it: no return type
/// or arguments (`scatter` for `scatter(int const*, ...)`), so that the
/// same fault seen by memcheck and by the dump is one kernel.
fn kernel_name(printed: &str) -> String {
    crate::site::simple_kernel_name(printed).trim().to_string()
}

/// `#0  0x00007f… in gather<<<(1024,1,1),(128,1,1)>>> () at /path/x.py:16`:
/// the kernel, its launch shape, and the frame's file.
fn frame(line: &str) -> Option<(String, Option<String>, Option<String>)> {
    let rest = line.strip_prefix("#0")?.trim_start();
    let rest = match rest.split_once(" in ") {
        Some((pc, after)) if pc.starts_with("0x") => after,
        _ => rest,
    };
    let (kernel, after) = rest.split_once("<<<")?;
    let (shape, after) = after.split_once(">>>").unwrap_or((after, ""));
    let path = after
        .rsplit_once(" at ")
        .and_then(|(_, at)| at.rsplit_once(':'))
        .map(|(file, _)| file.trim().to_string());
    Some((kernel.trim().to_string(), Some(shape.to_string()), path))
}

/// `(graph_wild_index.cu:15)`.
fn file_line_in_parens(text: &str) -> Option<(String, u32)> {
    let inner = text.strip_prefix('(')?.strip_suffix(')')?;
    let (file, line) = inner.rsplit_once(':')?;
    Some((file.to_string(), line.parse().ok()?))
}

fn dim_after(text: &str, key: &str) -> Option<Dim3> {
    let start = text.find(key)? + key.len();
    let rest = &text[start..];
    let end = rest.find(')')? + 1;
    crate::sanitizer::parse_dim3(&rest[..end])
}

fn word_after(text: &str, key: &str) -> Option<String> {
    let start = text.find(key)? + key.len();
    let word: String = text[start..]
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    (!word.is_empty()).then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FindingKind;

    const GRAPH: &str = "Opening GPU coredump: /tmp/d/core.751
[Current focus set to CUDA kernel 0, grid 30, block (16,0,0), thread (224,0,0), device 0, sm 2, warp 6, lane 0]

CUDA Exception: Warp Invalid Address Space
The exception was triggered at PC 0x7f3b137ace10  scatter(int const*, float const*, float*, int)  (graph_wild_index.cu:15)
#0  scatter<<<(256,1,1),(256,1,1)>>> () at /work/main/tests/gpu/coredump/graph_wild_index.cu:16
16\t}
";

    #[test]
    fn the_exception_line_is_the_fault_and_the_frame_gives_its_path() {
        let fault = read_reader(GRAPH).unwrap();
        assert_eq!(fault.exception, "Warp Invalid Address Space");
        assert_eq!(
            fault.kernel.as_deref(),
            Some("scatter(int const*, float const*, float*, int)")
        );
        let at = fault.location.unwrap();
        assert_eq!(
            (at.file.as_str(), at.line),
            ("/work/main/tests/gpu/coredump/graph_wild_index.cu", 15)
        );
        assert_eq!(fault.block, Some(Dim3 { x: 16, y: 0, z: 0 }));
        assert_eq!(fault.thread, Some(Dim3 { x: 224, y: 0, z: 0 }));
        assert_eq!(fault.device.as_deref(), Some("0"));
    }

    #[test]
    fn a_reader_that_crashed_names_no_fault() {
        let crashed = "Opening GPU coredump: /tmp/core.1505\n\
            cuda-gdb/14/gdb/cuda/cuda-state.c:182: internal-error: initialize: Assertion \
            `m_instance.m_num_devices > 0' failed.\n";
        assert_eq!(read_reader(crashed), None);
    }

    #[test]
    fn the_progress_names_the_exception_and_the_mangled_kernel() {
        let text = "[18:17:40.053793] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n\
            [18:17:40.053808] coredump:   - Device: 0\n\
            [18:17:40.054127] coredump:   #0\t0x7f3b137ace20\t_Z7scatterPKiPKfPfi\n\
            [18:17:40.807105] coredump: Writing ELF file to /r/coredump/core.1505\n";
        let faults = read_progress(text);
        assert_eq!(faults.len(), 1);
        let (fault, path) = &faults[0];
        assert_eq!(fault.exception, "Warp Illegal Address");
        assert_eq!(fault.kernel.as_deref(), Some("scatter"));
        assert_eq!(
            unmangled("_ZN2at6native24vectorized_gather_kernelILi16ElEEvPcS2_PT0_illllb"),
            "vectorized_gather_kernel"
        );
        assert_eq!(unmangled("gather"), "gather");
        assert_eq!(unmangled("_Zbroken"), "_Zbroken");
        assert_eq!(path.as_deref(), Some("/r/coredump/core.1505"));
        assert_eq!(classify(&fault.exception).0, FindingKind::InvalidAccess);
    }

    #[test]
    fn each_exception_has_its_kind_and_error() {
        assert_eq!(
            classify("Warp Misaligned Address"),
            (FindingKind::InvalidAccess, "cudaErrorMisalignedAddress")
        );
        assert_eq!(
            classify("Assertion failed"),
            (FindingKind::DeviceAssert, "cudaErrorAssert")
        );
        assert_eq!(
            classify("Warp Illegal Instruction"),
            (
                FindingKind::IllegalInstruction,
                "cudaErrorIllegalInstruction"
            )
        );
    }
}
