//! Judging each stage: clean, findings, target failed, tool failed,
//! inconclusive or skipped. Pure functions of what the stage left behind, so
//! every rule here is tested without a GPU.
//!
//! The rule that matters most: a stage is clean only when the tool provably
//! ran to the end and checked the program. Exit codes alone prove nothing
//! (racecheck exits 0 with hazards; ncu exits 0 having profiled nothing).

use cudawatch_parsers::builder::{NcuEvidence, SanitizerEvidence};
use cudawatch_parsers::model::{Outcome, ProcessEnd, Tool};

use crate::rundir::StageRecord;

/// Facts common to every stage, from the supervisor.
fn process_problem(record: &StageRecord, tool_name: &str) -> Option<(Outcome, String)> {
    if let Some(error) = &record.spawn_error {
        let hint = match record.tool {
            Tool::Plain => String::new(),
            Tool::Ncu => "; install Nsight Compute or pass --ncu / CUDAWATCH_NCU".into(),
            _ => "; install the CUDA toolkit or pass --compute-sanitizer / CUDAWATCH_COMPUTE_SANITIZER".into(),
        };
        return Some((Outcome::Inconclusive, format!("{error}{hint}")));
    }
    if record.interrupted {
        return Some((
            Outcome::Inconclusive,
            format!(
                "{tool_name} was interrupted after {:.0}s; partial output kept",
                record.seconds
            ),
        ));
    }
    if record.timed_out {
        let how = if record.killed {
            "killed (it ignored SIGTERM)"
        } else {
            "stopped"
        };
        return Some((
            Outcome::Inconclusive,
            format!(
                "timed out after {:.0}s and was {how}; raise --timeout",
                record.timeout_seconds
            ),
        ));
    }
    None
}

/// The plain run: the program's own exit and what it printed.
pub fn plain(record: &StageRecord, findings: usize) -> (Outcome, String) {
    if let Some(problem) = process_problem(record, "the program") {
        return problem;
    }
    let failed = record.end != ProcessEnd::Exited(0);
    match (failed, findings) {
        (_, n) if n > 0 => (
            Outcome::Findings,
            format!("{} printed {n} error site(s)", describe_end(record.end)),
        ),
        (true, _) => (
            Outcome::TargetFailed,
            format!("the program {}", describe_end(record.end)),
        ),
        (false, _) => (
            Outcome::Clean,
            "exited 0 with no CUDA errors in its output".into(),
        ),
    }
}

/// A compute-sanitizer stage.
pub fn sanitizer(
    record: &StageRecord,
    evidence: &SanitizerEvidence,
    stdout_has_usage: bool,
) -> (Outcome, String) {
    let tool = record.tool.name();
    if let Some(problem) = process_problem(record, tool) {
        return problem;
    }
    if stdout_has_usage {
        return (
            Outcome::ToolFailed,
            "compute-sanitizer rejected its arguments and printed its usage".into(),
        );
    }
    if let Some(line) = evidence.summary.failures.first() {
        let found = if evidence.folded > 0 {
            format!("{} error(s) reported, then ", evidence.folded)
        } else {
            String::new()
        };
        let why = if line.contains("before first instrumented API call") {
            "the program never initialised CUDA, so nothing was checked".to_string()
        } else if line.contains("didn't terminate successfully") {
            format!("{found}the program crashed under the tool: checked only up to the crash")
        } else {
            format!("compute-sanitizer said: {line}")
        };
        return (Outcome::Inconclusive, why);
    }
    if let Some(broken) = &evidence.xml_broken {
        return (
            Outcome::Inconclusive,
            format!("its XML is cut off ({broken}); kept what was complete"),
        );
    }
    if !evidence.summary.has_closing_line() {
        return (
            Outcome::Inconclusive,
            format!(
                "{tool} printed no summary line, so it did not finish ({})",
                describe_end(record.end)
            ),
        );
    }
    if record.end == ProcessEnd::Exited(255) {
        return (
            Outcome::Inconclusive,
            "compute-sanitizer exited 255: it failed to check the program".into(),
        );
    }
    if evidence.folded > 0 {
        let total = evidence
            .summary
            .errors
            .or(evidence.summary.racecheck.map(|r| r.0))
            .unwrap_or(evidence.folded);
        return (Outcome::Findings, format!("{total} error(s) reported"));
    }
    if evidence.summary.errors.is_some_and(|e| e > 0) {
        return (
            Outcome::Inconclusive,
            "ERROR SUMMARY counts errors but no record could be read".into(),
        );
    }
    if evidence.xml_records.is_none() {
        return (Outcome::Inconclusive, "no XML report was written".into());
    }
    (
        Outcome::Clean,
        format!("{tool} ran to the end and found nothing"),
    )
}

/// The ncu stage.
pub fn ncu(
    record: &StageRecord,
    evidence: &NcuEvidence,
    uncoalesced: usize,
    profile_written: bool,
) -> (Outcome, String) {
    if let Some(problem) = process_problem(record, "ncu") {
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
    if evidence.kernels == 0 {
        return (
            Outcome::Inconclusive,
            "the profile holds no kernel launches".into(),
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
        format!("{} launches profiled, all coalesced", evidence.kernels),
    )
}

fn describe_end(end: ProcessEnd) -> String {
    match end {
        ProcessEnd::Exited(0) => "exited 0".into(),
        ProcessEnd::Exited(code) => format!("exited {code}"),
        ProcessEnd::Signaled(sig) => format!("was killed by signal {sig}"),
        ProcessEnd::NotStarted => "never started".into(),
    }
}
