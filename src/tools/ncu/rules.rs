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
        } else if line.contains("LaunchFailed") {
            " (a kernel that faults cannot be profiled; fix the memory errors first)"
        } else {
            ""
        };
        return (Outcome::Inconclusive, format!("ncu said: {line}{hint}"));
    }
    if evidence.summary.no_kernels_profiled {
        return (
            Outcome::Inconclusive,
            "ncu profiled no kernels (it exits 0 all the same); check --ncu-kernel".into(),
        );
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
        return (
            Outcome::Findings,
            format!(
                "{uncoalesced} of {} profiled launches have uncoalesced accesses",
                evidence.kernels
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
