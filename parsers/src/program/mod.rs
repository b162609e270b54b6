//! What a CUDA program itself prints when it fails: CUDA error names and
//! messages, PyTorch out-of-memory figures, device-side assert lines, cuBLAS
//! and friends' status errors, "no kernel image", driver version errors,
//! Python tracebacks and pytest's failed tests. Everything becomes a
//! [`Site`] of the plain run, at the user's frame of the failure it was
//! printed in.

use crate::model::{FindingKind, Frame, Severity, Site, SourceLocation, Tool};
use crate::site::new_site;

mod cuda_strings;
mod pytest;
pub mod ranks;

use crate::traceback::{self, Failure};

const LIBRARY_PREFIXES: [&str; 7] = [
    "CUBLAS_STATUS_",
    "CUDNN_STATUS_",
    "CUFFT_",
    "CUSOLVER_STATUS_",
    "CUSPARSE_STATUS_",
    "CURAND_STATUS_",
    "nccl",
];

/// Whether a site is Python's `KeyboardInterrupt`: what SIGINT raises.
pub fn is_keyboard_interrupt(site: &Site) -> bool {
    site.kind == FindingKind::PythonException
        && (site.message == "KeyboardInterrupt" || site.message.starts_with("KeyboardInterrupt:"))
}

/// Reads a program's output (stderr, or stderr and stdout together).
pub fn parse(input: &[u8]) -> Vec<Site> {
    let text = String::from_utf8_lossy(input);
    let tagged: Vec<&str> = text.lines().collect();
    // A launcher's workers prefix their lines with their rank: read the
    // lines without it, and keep it for the sites they give.
    let (lines, tags) = ranks::untag(&tagged);
    let tests = pytest::failures(&lines);
    let from_pytest = !tests.is_empty();
    let failures: Vec<Failure> = if from_pytest {
        tests
    } else {
        traceback::tracebacks(&lines)
            .into_iter()
            // torchrun's own traceback only says a worker failed.
            .filter(|f| !ranks::is_launcher_exception(&f.exception))
            .collect()
    };
    let tag_at = |at: usize| tags.get(at).copied().flatten();
    let mut sites: Vec<Site> = Vec::new();
    let push = |mut site: Site, at: Option<usize>, sites: &mut Vec<Site>| {
        // Where the program was when it printed this: the user's frame of
        // the failure this line belongs to.
        let failure = match at {
            Some(at) => failure_at(&failures, at),
            None => main_failure(&failures, from_pytest),
        };
        // The rank of its own line, else of the failure it belongs to.
        let tag = at
            .and_then(tag_at)
            .or_else(|| failure.and_then(|f| tag_at(f.lines.start)));
        if let Some(existing) = sites.iter_mut().find(|s| s.id == site.id) {
            existing.count += 1;
            // The same failure on another rank: it names both.
            if let Some(process) = tag.map(ranks::Tag::process)
                && !existing.processes.contains(&process)
            {
                existing.processes.push(process);
            }
            return;
        }
        if site.processes.is_empty() {
            site.processes.extend(tag.map(ranks::Tag::process));
        }
        if let Some(frame) = failure.and_then(|f| f.user_frame.as_ref()) {
            if site.location.is_none() {
                site.location = frame_location(frame);
            }
            if site.python_frame.is_none() {
                site.python_frame = Some(frame.clone());
            }
        }
        sites.push(site);
    };
    for (i, line) in lines.iter().enumerate() {
        if let Some(site) = device_assert(line) {
            push(site, Some(i), &mut sites);
        }
        if let Some(site) = out_of_memory(line).or_else(|| xla_out_of_memory(line)) {
            push(site, Some(i), &mut sites);
        }
        for site in cuda_errors(line) {
            push(site, Some(i), &mut sites);
        }
        if let Some(site) = library_error(line) {
            push(site, Some(i), &mut sites);
        }
    }
    // CSAN's reports carry their own frames. The exception CSAN raises
    // after them (`CUDASanitizerErrors`) is then not a site of its own: a
    // failure becomes one only when nothing else explains it.
    for site in crate::csan::parse_ranked(&lines, &tags) {
        push(site, None, &mut sites);
    }
    for site in ranks::collective_timeouts(&lines, &tags) {
        sites.push(site);
    }
    if sites.is_empty() {
        // Then every failure is one: each failed test (pytest's, or
        // unittest's tracebacks), but not an exception that only led to a
        // later one.
        for failure in failures.iter().filter(|f| !f.chained) {
            push(
                exception_site(failure),
                Some(failure.lines.start),
                &mut sites,
            );
        }
    }
    first_failed_rank_first(&mut sites, ranks::root_cause(&lines));
    sites
}

/// With the launcher's word on which worker failed first (torchrun's root
/// cause), its sites lead, and learn its pid; the others' (a peer's
/// watchdog timeout, a rank torn down) follow in their order.
fn first_failed_rank_first(sites: &mut [Site], cause: Option<ranks::RootCause>) {
    let Some(cause) = cause else {
        return;
    };
    let of_cause = |site: &Site| {
        site.processes.iter().any(|p| {
            (p.rank.is_some() && p.rank == cause.process.rank)
                || (p.rank.is_none()
                    && p.local_rank.is_some()
                    && p.local_rank == cause.process.local_rank)
        })
    };
    for site in sites.iter_mut().filter(|s| of_cause(s)) {
        for p in &mut site.processes {
            p.merge(&cause.process);
        }
    }
    sites.sort_by_key(|s| !of_cause(s));
}

/// The failure a site first printed on line `at` belongs to: the one
/// spanning that line, else the first after it (a device assert's lines
/// come before the traceback they cause), else the last.
fn failure_at(failures: &[Failure], at: usize) -> Option<&Failure> {
    failures
        .iter()
        .find(|f| f.lines.contains(&at))
        .or_else(|| failures.iter().find(|f| f.lines.start > at))
        .or_else(|| failures.last())
}

/// The failure a site with no line of its own is put at: pytest's first
/// failed test (later ones may only follow from it), or Python's last
/// traceback (the exception that ended the program).
fn main_failure(failures: &[Failure], from_pytest: bool) -> Option<&Failure> {
    if from_pytest {
        failures.first()
    } else {
        failures.last()
    }
}

/// A Python exception that nothing else in the output explains.
fn exception_site(failure: &Failure) -> Site {
    let mut site = new_site(
        Tool::Plain,
        FindingKind::PythonException,
        Severity::Error,
        failure.exception.clone(),
    );
    site.location = failure.user_frame.as_ref().and_then(frame_location);
    site.python_frame = failure.user_frame.clone();
    site.error = failure.exception.split(':').next().map(str::to_string);
    site.id = crate::site::site_id(&site, site.error.as_deref().unwrap_or(""));
    site
}

fn frame_location(frame: &Frame) -> Option<SourceLocation> {
    Some(SourceLocation {
        file: frame.file.clone()?,
        line: frame.line?,
    })
}

/// `FILE:LINE: FUNC: block: [x,y,z], thread: [x,y,z] Assertion `EXPR` failed.`
fn device_assert(line: &str) -> Option<Site> {
    let (head, tail) = line.split_once(": block: [")?;
    let (block, rest) = tail.split_once("], thread: [")?;
    let (thread, rest) = rest.split_once(']')?;
    let expr = rest
        .trim()
        .strip_prefix("Assertion")?
        .trim()
        .trim_end_matches("failed.")
        .trim();
    let (location, func) = head.split_once(": ").unwrap_or((head, ""));
    let (file, line_no) = location.rsplit_once(':')?;
    let mut site = new_site(
        Tool::Plain,
        FindingKind::DeviceAssert,
        Severity::Error,
        format!("device-side assert {expr} failed"),
    );
    site.kernel = (!func.is_empty()).then(|| func.to_string());
    site.location = Some(SourceLocation {
        file: file.to_string(),
        line: line_no.trim().parse().ok()?,
    });
    site.samples.push(crate::model::Sample {
        thread: crate::sanitizer::parse_dim3(thread),
        block: crate::sanitizer::parse_dim3(block),
        address: None,
        nearest_allocation: None,
        bytes: None,
    });
    site.id = crate::site::site_id(&site, expr);
    Some(site)
}

/// PyTorch: `CUDA out of memory. Tried to allocate 4096.00 GiB. GPU 0 has a
/// total capacity of 79.18 GiB of which 76.45 GiB is free. ... Of the
/// allocated memory 1024.00 MiB is allocated by PyTorch, and 0 bytes is
/// reserved by PyTorch but unallocated.`
fn out_of_memory(line: &str) -> Option<Site> {
    let start = line.find("CUDA out of memory.")?;
    let text = &line[start..];
    let tried = between(text, "Tried to allocate ", ". ").map(str::to_string);
    let capacity = between(text, "total capacity of ", " of which");
    let free = between(text, "of which ", " is free");
    let allocated = between(text, "Of the allocated memory ", " is allocated by PyTorch");
    let reserved = between(text, "and ", " is reserved by PyTorch but unallocated");
    let mut parts = vec![format!(
        "tried to allocate {}",
        tried.as_deref().unwrap_or("?")
    )];
    if let Some(c) = capacity {
        parts.push(format!("capacity {c}"));
    }
    if let Some(f) = free {
        parts.push(format!("free {f}"));
    }
    if let Some(a) = allocated {
        parts.push(format!("allocated by PyTorch {a}"));
    }
    if let Some(r) = reserved {
        parts.push(format!(
            "reserved but unallocated {}",
            r.rsplit("and ").next().unwrap_or(r)
        ));
    }
    let mut site = new_site(
        Tool::Plain,
        FindingKind::OutOfMemory,
        Severity::Error,
        format!("CUDA out of memory: {}", parts.join(", ")),
    );
    site.bytes = tried.as_deref().and_then(size_in_bytes);
    site.memory = Some(crate::model::MemoryFigures {
        tried: site.bytes,
        capacity: capacity.and_then(size_in_bytes),
        free: free.and_then(size_in_bytes),
        in_use_by_process: between(text, "this process has ", " memory in use")
            .and_then(size_in_bytes),
        allocated: allocated.and_then(size_in_bytes),
        reserved_unallocated: reserved
            .map(|r| r.rsplit("and ").next().unwrap_or(r))
            .and_then(size_in_bytes),
        fragmentation_hint: text.contains("expandable_segments"),
    });
    site.error = Some("cudaErrorMemoryAllocation".into());
    site.id = crate::site::site_id(&site, "");
    Some(site)
}

/// JAX: the exception XLA raises when its allocator cannot serve a buffer,
/// `jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while
/// trying to allocate 125.02GiB with allocator GPU_0_bfc on device 0.`
/// (jax 0.11, `sample-reports/beyond/jax_oom/`), or, from older JAX,
/// `jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory
/// while trying to allocate 17179869184 bytes.` Only the exception's line:
/// XLA's log repeats the status where its autotuner met it first.
fn xla_out_of_memory(line: &str) -> Option<Site> {
    const SIGN: &str = "RuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate ";
    let start = line.find(SIGN)? + SIGN.len();
    let size = line[start..]
        .split(" with ")
        .next()?
        .trim()
        .trim_end_matches('.');
    let bytes = xla_size_in_bytes(size);
    let allocator = between(&line[start..], "with allocator ", " ").map(str::to_string);
    let mut site = new_site(
        Tool::Plain,
        FindingKind::OutOfMemory,
        Severity::Error,
        match &allocator {
            Some(a) => format!("out of GPU memory (XLA): tried to allocate {size} ({a})"),
            None => format!("out of GPU memory (XLA): tried to allocate {size}"),
        },
    );
    site.bytes = bytes;
    site.memory = Some(crate::model::MemoryFigures {
        tried: bytes,
        ..Default::default()
    });
    site.error = Some("RESOURCE_EXHAUSTED".into());
    site.id = crate::site::site_id(&site, "");
    Some(site)
}

/// XLA's sizes: `125.02GiB` (no space) or `17179869184 bytes`.
fn xla_size_in_bytes(text: &str) -> Option<u64> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = match unit.trim() {
        "" => "bytes",
        u => u,
    };
    size_in_bytes(&format!("{number} {unit}"))
}

/// `4096.00 GiB` -> bytes, as PyTorch's messages write sizes; refuses
/// what no GPU has (`inf`, `NaN`, `1e300 GiB`, negative).
pub(crate) fn size_in_bytes(text: &str) -> Option<u64> {
    let (number, unit) = text.trim().split_once(' ')?;
    let number: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)?;
    let scale = match unit.trim() {
        "bytes" | "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = number * scale;
    (bytes < 1e18).then_some(bytes as u64)
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let (_, rest) = text.split_once(start)?;
    Some(rest.split_once(end).map_or(rest, |(v, _)| v))
}

/// Every CUDA error a line names: `cudaErrorX` tokens (with a code in
/// parentheses when present), the driver's `CUDA_ERROR_X` names, or a
/// runtime error string of CUDA 13's table (`cuda_strings::by_string`),
/// each at the line's `at file:line` or `file:line` when it has one.
fn cuda_errors(line: &str) -> Vec<Site> {
    let mut out = Vec::new();
    if line.contains("CUDA out of memory") {
        return out;
    }
    let mut names: Vec<(String, Option<i64>)> = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("cudaError") {
        let token: String = rest[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let after = &rest[i + token.len()..];
        let code = after
            .trim_start()
            .strip_prefix('(')
            .map(|a| a.trim_start_matches("error "))
            .and_then(|a| a.split(')').next())
            .and_then(|c| c.trim().parse().ok());
        if token.len() > "cudaError".len() && !names.iter().any(|(n, _)| *n == token) {
            names.push((token.clone(), code));
        }
        rest = &rest[i + token.len().max(1)..];
    }
    for error in cuda_strings::driver_names(line) {
        if !names.iter().any(|(n, _)| *n == error.name) {
            names.push((error.name.clone(), Some(error.code)));
        }
    }
    if names.is_empty()
        && let Some(error) = cuda_strings::by_string(line)
    {
        names.push((error.name.clone(), Some(error.code)));
    }
    for (name, code) in names {
        let message = cuda_strings::by_name(&name)
            .map(|e| e.text.as_str())
            .or_else(|| {
                line.rsplit(": ")
                    .next()
                    .filter(|m| !m.contains("cudaError") && !m.trim().is_empty())
            })
            .unwrap_or("");
        let kind = match name.as_str() {
            "cudaErrorNoKernelImageForDevice" => FindingKind::NoKernelImage,
            "cudaErrorInsufficientDriver"
            | "cudaErrorUnsupportedPtxVersion"
            | "cudaErrorCallRequiresNewerDriver" => FindingKind::DriverVersion,
            _ => FindingKind::CudaError,
        };
        let code_text = code.map(|c| format!(" ({c})")).unwrap_or_default();
        let mut site = new_site(
            Tool::Plain,
            kind,
            Severity::Error,
            format!("{name}{code_text}: {}", message.trim()),
        );
        site.location = at_location(line).or_else(|| {
            cuda_strings::source_position(line).map(|(file, line)| SourceLocation { file, line })
        });
        site.error = Some(name.clone());
        site.id = crate::site::site_id(&site, &name);
        out.push(site);
    }
    out
}

/// `... at /path/file.cu:18: ...` as printed by the usual CHECK macros.
fn at_location(line: &str) -> Option<SourceLocation> {
    let (_, rest) = line.split_once(" at ")?;
    let spot = rest.split_whitespace().next()?.trim_end_matches(':');
    let (file, number) = spot.rsplit_once(':')?;
    Some(SourceLocation {
        file: file.to_string(),
        line: number.parse().ok()?,
    })
}

fn library_error(line: &str) -> Option<Site> {
    let status = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| {
            LIBRARY_PREFIXES.iter().any(|p| {
                w.starts_with(p)
                    && w.len() > p.len()
                    && w.chars()
                        .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            }) || (w.starts_with("nccl") && w.ends_with("Error"))
        })?;
    let mut site = new_site(
        Tool::Plain,
        FindingKind::LibraryError,
        Severity::Error,
        line.trim().to_string(),
    );
    site.error = Some(status.to_string());
    site.id = crate::site::site_id(&site, status);
    Some(site)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exception_that_only_led_to_another_is_not_a_finding_of_its_own() {
        let text = "\
Traceback (most recent call last):
  File \"/work/load.py\", line 4, in read
    return open(path).read()
FileNotFoundError: weights.pt

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File \"/work/train.py\", line 9, in main
    raise RuntimeError(\"no checkpoint\") from e
RuntimeError: no checkpoint
";
        let sites = parse(text.as_bytes());
        assert_eq!(sites.len(), 1, "{sites:?}");
        assert_eq!(sites[0].message, "RuntimeError: no checkpoint");
        assert_eq!(sites[0].location.as_ref().unwrap().line, 9);
    }

    #[test]
    fn every_frameworks_way_of_saying_a_cuda_error_is_the_same_error() {
        // The words each stack prints for one illegal address (a kernel
        // reading through a wild index), as their exceptions word them.
        for line in [
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered",
            "numba.cuda.cudadrv.driver.CudaAPIError: [700] Call to cuMemcpyDtoH results in CUDA_ERROR_ILLEGAL_ADDRESS",
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA error: : CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered",
            "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered",
            "  what():  parallel_for failed: cudaErrorIllegalAddress: an illegal memory access was encountered",
            "kernel.cu:88 an illegal memory access was encountered",
        ] {
            let sites = cuda_errors(line);
            assert_eq!(sites.len(), 1, "{line}: {sites:?}");
            assert_eq!(
                sites[0].error.as_deref(),
                Some("cudaErrorIllegalAddress"),
                "{line}"
            );
        }
        assert_eq!(
            cuda_errors("kernel.cu:88 an illegal memory access was encountered")[0]
                .location
                .as_ref()
                .map(|l| (l.file.as_str(), l.line)),
            Some(("kernel.cu", 88))
        );
    }

    #[test]
    fn xlas_older_out_of_memory_says_bytes_and_its_log_lines_are_not_the_error() {
        // The capture of jax 0.11's is read in tests/captures.rs.
        let old = xla_out_of_memory(
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while \
             trying to allocate 17179869184 bytes.",
        )
        .unwrap();
        assert_eq!(old.bytes, Some(17_179_869_184));
        assert_eq!(
            old.message,
            "out of GPU memory (XLA): tried to allocate 17179869184 bytes"
        );
        assert_eq!(
            xla_out_of_memory("W bfc_allocator.cc:371] ran out of memory"),
            None
        );
    }
}
