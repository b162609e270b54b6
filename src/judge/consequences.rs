//! Root cause first. After the first invalid access or device assert, every
//! later CUDA call fails with the same sticky error (719, 710, 700, ...), a
//! program that bails out leaks what it allocated, and the plain run's
//! crash is the same fault seen without a sanitizer. Those sites are linked
//! to the site that caused them (`Site::consequence_of`), so the report
//! leads with one cause instead of five symptoms.

use cudawatch_model::{FindingKind, Report, Site, Tool};

/// CUDA errors that poison the context: every call after a fault returns one.
const STICKY: &[&str] = &[
    "cudaErrorIllegalAddress",
    "cudaErrorAssert",
    "cudaErrorLaunchFailure",
    "cudaErrorMisalignedAddress",
    "cudaErrorHardwareStackError",
    "cudaErrorIllegalInstruction",
    "cudaErrorInvalidAddressSpace",
    "cudaErrorInvalidPc",
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUBLAS_STATUS_EXECUTION_FAILED",
];

/// Whether the site reports a sticky error (a symptom of an earlier fault).
pub fn is_sticky(site: &Site) -> bool {
    site.error.as_deref().is_some_and(|e| STICKY.contains(&e))
}

/// Links every consequence to its root; returns nothing, the sites carry it.
pub fn link(report: &mut Report) {
    for site in &mut report.findings {
        site.consequence_of = None;
        site.seen_by.clear();
    }
    let Some(root) = root_cause(&report.findings).map(|s| s.id.clone()) else {
        return;
    };
    let root_site = report.findings.iter().find(|s| s.id == root).cloned();
    let Some(root_site) = root_site else { return };
    let fault = is_device_fault(&root_site);
    let mut seen_by = Vec::new();
    for site in &mut report.findings {
        // A CI log holds several runs (one per test): only the same run's
        // sites can follow from its fault.
        if site.id == root || site.test != root_site.test {
            continue;
        }
        // The same fault, seen by another tool.
        let same_fault = (site.tool == Tool::Coredump && fault && same_kernel(site, &root_site))
            || (site.kind == FindingKind::DeviceException
                && root_site.kind == FindingKind::DeviceAssert
                && site.kernel.as_deref() == Some("__assertfail"));
        if same_fault && site.tool != root_site.tool && !seen_by.contains(&site.tool) {
            seen_by.push(site.tool);
        }
        let follows = same_fault
            || match site.kind {
                // Every call after a fault returns its sticky error.
                FindingKind::ApiError | FindingKind::CudaError | FindingKind::LibraryError => {
                    (fault && is_sticky(site))
                        || (!fault && site.error.is_some() && site.error == root_site.error)
                }
                // What a program that bailed out never freed.
                FindingKind::Leak => true,
                // A peer left waiting in a collective by the rank that failed.
                FindingKind::CollectiveTimeout => {
                    let ranks = |s: &Site| {
                        s.processes
                            .iter()
                            .filter_map(|p| p.rank)
                            .collect::<Vec<_>>()
                    };
                    let root_ranks = ranks(&root_site);
                    !root_ranks.is_empty() && ranks(site).iter().all(|r| !root_ranks.contains(r))
                }
                _ => false,
            };
        if follows {
            site.consequence_of = Some(root.clone());
        }
    }
    // In plan order, as the stages ran.
    seen_by.sort_by_key(|t| Tool::STAGES.iter().position(|s| s == t));
    if let Some(root_site) = report.findings.iter_mut().find(|s| s.id == root) {
        root_site.seen_by = seen_by;
    }
    launching_line_from_plain(report, &root);
}

/// The GPU core dump names the faulting kernel and line but not who
/// launched it (the driver aborts the process: no traceback). The plain
/// run's error, which follows from it, surfaced at the user's line (with
/// `CUDA_LAUNCH_BLOCKING=1`, the `graph.replay()` that ran the kernel): the
/// dump's site takes that line as its launching frame, marked as the plain
/// run's (`Site::launch_seen_by`).
fn launching_line_from_plain(report: &mut Report, root: &str) {
    let from = report
        .findings
        .iter()
        .find(|s| {
            s.tool == Tool::Plain
                && s.consequence_of.as_deref() == Some(root)
                && (s.python_frame.is_some() || s.launch_frame.is_some())
        })
        .map(|s| (s.python_frame.clone(), s.launch_frame.clone()));
    let Some((python, native)) = from else {
        return;
    };
    if let Some(site) = report.findings.iter_mut().find(|s| {
        s.id == root
            && s.tool == Tool::Coredump
            && s.python_frame.is_none()
            && s.launch_frame.is_none()
    }) {
        site.python_frame = python;
        site.launch_frame = native;
        site.launch_seen_by = Some(Tool::Plain);
    }
}

/// The failure everything else follows from: a device fault found by a
/// sanitizer or the program itself (a precise access or heap record
/// first, then a device assert, then any other), else the GPU core dump's
/// view of one, else the first failing call (the plain run's, which
/// carries the user's line). A sanitizer's record (the address, the
/// allocation, a stack overflow named as one) or the program's own assert
/// message comes before the dump's view of the same fault, which is
/// coarser: the dump names a stack overflow an out-of-range address
/// (sample-reports/outside/stack_overflow/), a bad free() an illegal
/// address inside free() (sample-reports/records/free_invalid/). The dump
/// leads where it alone placed the fault.
pub fn root_cause(sites: &[Site]) -> Option<&Site> {
    let precise = [FindingKind::InvalidAccess, FindingKind::DeviceHeapError];
    let first_fault = |from_dump: bool| {
        let faults = || {
            sites
                .iter()
                .filter(move |s| is_device_fault(s) && (s.tool == Tool::Coredump) == from_dump)
        };
        faults()
            .find(|s| precise.contains(&s.kind))
            .or_else(|| faults().find(|s| s.kind == FindingKind::DeviceAssert))
            .or_else(|| faults().next())
    };
    first_fault(false)
        .or_else(|| first_fault(true))
        .or_else(|| {
            sites.iter().find(|s| {
                s.tool == Tool::Plain
                    && matches!(
                        s.kind,
                        FindingKind::CudaError
                            | FindingKind::OutOfMemory
                            | FindingKind::NoKernelImage
                            | FindingKind::LibraryError
                    )
            })
        })
}

/// Whether two sites name the same kernel (by bare name: memcheck's XML
/// and the dump's reader spell signatures differently).
fn same_kernel(a: &Site, b: &Site) -> bool {
    let bare = |s: &Site| {
        s.kernel
            .as_deref()
            .map(|k| cudawatch_parsers::site::bare_kernel_name(k).to_string())
    };
    bare(a).is_some() && bare(a) == bare(b)
}

/// An invalid access, a device assert, or a device exception other than
/// memcheck's view of an assert.
fn is_device_fault(site: &Site) -> bool {
    match site.kind {
        FindingKind::DeviceException => site.kernel.as_deref() != Some("__assertfail"),
        ref kind => kind.stops_the_kernel(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudawatch_model::Severity;
    use cudawatch_parsers::site::new_site;

    fn site(tool: Tool, kind: FindingKind, error: Option<&str>, id: &str) -> Site {
        let mut s = new_site(tool, kind, Severity::Error, id.into());
        s.id = id.into();
        s.error = error.map(str::to_string);
        s
    }

    #[test]
    fn the_719s_the_leak_and_the_plain_crash_follow_the_invalid_access() {
        let mut report = Report::new("t");
        report.findings = vec![
            site(
                Tool::Memcheck,
                FindingKind::ApiError,
                Some("cudaErrorLaunchFailure"),
                "api",
            ),
            site(Tool::Memcheck, FindingKind::InvalidAccess, None, "oob"),
            site(Tool::Memcheck, FindingKind::Leak, None, "leak"),
            site(
                Tool::Plain,
                FindingKind::CudaError,
                Some("cudaErrorIllegalAddress"),
                "plain",
            ),
            site(Tool::Racecheck, FindingKind::Race, None, "race"),
        ];
        link(&mut report);
        let of = |id: &str| {
            report
                .findings
                .iter()
                .find(|s| s.id == id)
                .unwrap()
                .consequence_of
                .clone()
        };
        assert_eq!(of("oob"), None);
        assert_eq!(of("api").as_deref(), Some("oob"));
        assert_eq!(of("leak").as_deref(), Some("oob"));
        assert_eq!(of("plain").as_deref(), Some("oob"));
        assert_eq!(of("race"), None, "an unrelated finding stays its own");
    }

    #[test]
    fn without_a_fault_the_same_failing_call_under_memcheck_follows_the_plain_one() {
        let mut report = Report::new("t");
        report.findings = vec![
            site(
                Tool::Memcheck,
                FindingKind::ApiError,
                Some("cudaErrorInvalidValue"),
                "api",
            ),
            site(
                Tool::Plain,
                FindingKind::CudaError,
                Some("cudaErrorInvalidValue"),
                "plain",
            ),
            site(
                Tool::Memcheck,
                FindingKind::ApiError,
                Some("cudaErrorMemoryAllocation"),
                "other",
            ),
        ];
        link(&mut report);
        assert_eq!(report.findings[0].consequence_of.as_deref(), Some("plain"));
        assert_eq!(report.findings[1].consequence_of, None);
        assert_eq!(
            report.findings[2].consequence_of, None,
            "a different error stays"
        );
    }

    #[test]
    fn a_leak_alone_is_its_own_finding() {
        let mut report = Report::new("t");
        report.findings = vec![site(Tool::Memcheck, FindingKind::Leak, None, "leak")];
        link(&mut report);
        assert_eq!(report.findings[0].consequence_of, None);
    }
}
