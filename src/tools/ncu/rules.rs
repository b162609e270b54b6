//! When the ncu stage is clean: it profiled launches and measured their
//! coalescing; "No kernels were profiled" with exit 0 is not clean.

use cudawatch_model::{Outcome, ProcessEnd};
use cudawatch_parsers::builder::NcuEvidence;

use crate::tools::StageRecord;
use crate::tools::outcome::{describe_end, process_problem};
use crate::words::plural;

/// The remedy when ncu is nowhere.
pub const MISSING: &str = "; install Nsight Compute or pass --ncu / CUDAWATCH_NCU";

/// The ncu stage.
pub fn rule(
    record: &StageRecord,
    evidence: &NcuEvidence,
    uncoalesced: usize,
    profile_written: bool,
) -> (Outcome, String) {
    if let Some(problem) = process_problem(record, "ncu", MISSING) {
        return problem;
    }
    // A launch ncu could not profile (a faulting kernel gives "LaunchFailed")
    // was not measured, so the stage cannot vouch for it.
    if let Some(line) = evidence.summary.failures.first() {
        let hint = if line.contains("ERR_NVGPUCTRPERM") {
            ": the GPU's performance counters need admin rights (NVreg_RestrictProfilingToAdminUsers=0)"
        } else if line.contains("Multi-Process Server (MPS)") && !super::mps::ran_outside(record) {
            super::mps::REFUSED
        } else if line.contains("counter measurement library") {
            // sample-reports/beyond/ncu_counters_beside/: beside other
            // programs' profiling, where the plain run had no fault.
            " (a kernel that faults, or another profiler on this GPU: check the program alone)"
        } else if line.contains("LaunchFailed") {
            " (a kernel that faults cannot be profiled; fix the memory errors first)"
        } else {
            ""
        };
        return (Outcome::Inconclusive, format!("ncu said: {line}{hint}"));
    }
    if evidence.summary.no_kernels_profiled {
        return no_kernels(record, evidence);
    }
    if !profile_written {
        return (
            Outcome::Inconclusive,
            format!("ncu wrote no report ({})", describe_end(record.end)),
        );
    }
    if let Some((file, error)) = evidence.errors.first() {
        return (
            Outcome::ToolFailed,
            format!("could not read {file}: {error}"),
        );
    }
    if let Some((page, end)) = record
        .imports
        .iter()
        .find(|(_, end)| *end != ProcessEnd::Exited(0))
    {
        return (
            Outcome::ToolFailed,
            format!(
                "ncu --import writing {page} {}: its page cannot be trusted",
                describe_end(*end)
            ),
        );
    }
    if evidence.kernels == 0 {
        return (
            Outcome::Inconclusive,
            "the profile holds no kernel launches".into(),
        );
    }
    if evidence.measured == 0 {
        return (
            Outcome::Inconclusive,
            format!(
                "none of the {} profiled launches has a coalescing figure (no sector metrics in the raw page)",
                evidence.kernels
            ),
        );
    }
    if uncoalesced > 0 {
        let unread = match evidence.unreadable.first() {
            Some(first) => format!(
                "; {} more could not be read from ncu's raw page (first: {first})",
                evidence.unreadable.len()
            ),
            None => String::new(),
        };
        return (
            Outcome::Findings,
            format!(
                "{uncoalesced} of {} profiled launches have uncoalesced accesses{unread}",
                evidence.kernels
            ),
        );
    }
    // The program stopped early under ncu ("The application returned an
    // error code", as the sanitizers say "Target application returned an
    // error"): the launches after the failure were never profiled. Seen on
    // the H100: Inductor's CUDA graphs fail under ncu's Python call stacks
    // ("Detected 3 tensor(s) in the cudagraph pool not tracked as outputs")
    // after 10 launches profiled; that stage now runs again without them
    // (`tools::cuda_graphs`), and this stays for what cannot.
    if evidence.summary.target_failed {
        return (
            Outcome::Inconclusive,
            format!(
                "the program failed under ncu ({}) after {} profiled: profiled only up to its failure",
                describe_end(record.end),
                plural(evidence.kernels as u64, "launch")
            ),
        );
    }
    // A launch whose figures could not be read was not judged: the others
    // may all be coalesced, the stage cannot say it of every launch.
    if let Some(first) = evidence.unreadable.first() {
        return (
            Outcome::Inconclusive,
            format!(
                "{} of {} profiled could not be read from ncu's raw page (first: {first}); the \
                 others are all coalesced",
                evidence.unreadable.len(),
                plural(
                    (evidence.kernels + evidence.unreadable.len()) as u64,
                    "launch"
                )
            ),
        );
    }
    (
        Outcome::Clean,
        format!(
            "{} profiled, all coalesced",
            plural(evidence.kernels as u64, "launch")
        ),
    )
}

/// ncu's flags that select launches: with one of them, "no kernels were
/// profiled" may only mean that nothing matched.
const LAUNCH_FILTERS: [&str; 14] = [
    "-k",
    "--kernel-name",
    "--kernel-id",
    "--kernel-name-base",
    "-s",
    "--launch-skip",
    "--launch-skip-before-match",
    "--nvtx-include",
    "--nvtx-exclude",
    "--range-filter",
    "--native-include",
    "--native-exclude",
    "--python-include",
    "--python-exclude",
];

/// "No kernels were profiled" (ncu exits 0 all the same). It is the
/// program's truth only when ncu attached to it, nothing narrowed the
/// selection, and the program ran to its end: then it launched no kernel,
/// there is nothing to profile, and the stage says so. Any other way, ncu
/// may simply have missed the kernels, so the stage vouches for nothing.
fn no_kernels(record: &StageRecord, evidence: &NcuEvidence) -> (Outcome, String) {
    if let Some(left_out) = super::vendor_filter::left_out(&record.command) {
        return all_left_out(record, evidence, &left_out);
    }
    let filter = record.command.iter().find(|a| {
        LAUNCH_FILTERS
            .iter()
            .any(|f| a.as_str() == *f || a.starts_with(&format!("{f}=")))
    });
    if let Some(flag) = filter {
        return (
            Outcome::Inconclusive,
            format!(
                "ncu profiled no kernels with {flag} selecting launches (it exits 0 all the \
                 same): nothing matched, so nothing was measured; check --ncu-kernel"
            ),
        );
    }
    if !evidence.summary.available_kernels.is_empty() {
        return (
            Outcome::Inconclusive,
            format!(
                "ncu profiled none of the kernels it saw launched ({}; it exits 0 all the same)",
                evidence.summary.available_kernels.join(", ")
            ),
        );
    }
    if !evidence.summary.attached {
        return (
            Outcome::Inconclusive,
            "ncu profiled no kernels and never said it attached to the program (it exits 0 all \
             the same): it may not have seen the program's launches"
                .into(),
        );
    }
    if record.end != ProcessEnd::Exited(0) || evidence.summary.target_failed {
        return (
            Outcome::Inconclusive,
            format!(
                "ncu profiled no kernels and the program did not finish normally ({}): it \
                 stopped before any launch could be measured",
                describe_end(record.end)
            ),
        );
    }
    (Outcome::Clean, NOTHING_TO_PROFILE.into())
}

/// "No kernels were profiled" under cudawatch's own filter of PyTorch's
/// and the libraries' kernels: every kernel ncu saw launched was one it
/// left out. That is the
/// program's truth, as [`no_kernels`] says it without a filter, only when
/// ncu listed the kernels it saw (or the program launched none), attached
/// to the program, and the program ran to its end.
fn all_left_out(
    record: &StageRecord,
    evidence: &NcuEvidence,
    left_out: &super::vendor_filter::LeftOut,
) -> (Outcome, String) {
    let seen = &evidence.summary.available_kernels;
    let ran_through = evidence.summary.attached
        && record.end == ProcessEnd::Exited(0)
        && !evidence.summary.target_failed;
    if !ran_through {
        return (
            Outcome::Inconclusive,
            format!(
                "ncu profiled no kernels and the program did not run to its end under it \
                 ({}): it may have stopped before a kernel of its own",
                describe_end(record.end)
            ),
        );
    }
    let others: Vec<&String> = seen.iter().filter(|k| !left_out.leaves_out(k)).collect();
    if !others.is_empty() {
        return (
            Outcome::Inconclusive,
            format!(
                "ncu profiled none of the kernels it saw launched ({}), which cudawatch's filter \
                 of PyTorch's and the libraries' kernels does not leave out (it exits 0 all the \
                 same)",
                shown(&others)
            ),
        );
    }
    if seen.is_empty() {
        return (
            Outcome::Clean,
            "nothing to profile: the program launched no kernel (ncu attached to it, saw none \
             launched, and the program ran to its end)"
                .into(),
        );
    }
    (
        Outcome::Clean,
        format!(
            "nothing of the program's own to profile: the {} ncu saw launched ({}) were all \
             left out; {}",
            plural(seen.len() as u64, "kernel"),
            shown(&seen.iter().collect::<Vec<_>>()),
            left_out.said()
        ),
    )
}

/// The first three kernels by their functions' paths
/// (`at::native::reduce_kernel`; the mangled names run to hundreds of
/// characters), `...` after them when there are more.
fn shown(kernels: &[&String]) -> String {
    let mut names: Vec<String> = kernels
        .iter()
        .take(3)
        .map(|k| {
            cudawatch_parsers::mangled::function_path(k).map_or((*k).clone(), |p| p.join("::"))
        })
        .collect();
    if kernels.len() > names.len() {
        names.push("...".into());
    }
    names.join(", ")
}

/// The ncu stage's reason when the program launched no kernel.
pub const NOTHING_TO_PROFILE: &str = "nothing to profile: the program launched no kernel (ncu \
     attached to it, selected every launch, and the program ran to its end without one)";
