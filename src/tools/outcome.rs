//! What every kind of stage shares when it is judged: clean, findings,
//! target failed, tool failed, inconclusive or skipped. Each kind's own
//! rules live in its module (`plain`, `sanitizer`, `ncu`, `csan`,
//! `memory`, `oom_recovery`), pure functions of what the stage left behind,
//! so every rule is tested without a GPU (`rules_tests.rs`, a row each).
//!
//! The rule that matters most: a stage is clean only when the tool provably
//! ran to the end and checked the program. Exit codes alone prove nothing
//! (racecheck exits 0 with hazards; ncu exits 0 having profiled nothing).

use cudawatch_model::{Outcome, ProcessEnd, Tool};

use super::StageRecord;

/// Facts common to every stage, from the supervisor: never finished,
/// could not start (with the kind's remedy for a missing executable),
/// interrupted, timed out.
pub fn process_problem(
    record: &StageRecord,
    tool_name: &str,
    missing_hint: &str,
) -> Option<(Outcome, String)> {
    // Not run on purpose (not applicable, or blocked by the plain run's
    // out-of-memory error): a choice, said, never a failure to check.
    if let Some(why) = &record.not_applicable {
        return Some((Outcome::Skipped, why.clone()));
    }
    if record.unfinished {
        return Some((
            Outcome::Inconclusive,
            format!(
                "{tool_name} never finished: cudawatch was stopped while it ran (killed, out of \
                 memory, or the machine was lost); what it wrote is kept and read"
            ),
        ));
    }
    if let Some(error) = &record.spawn_error {
        // The lookup's own message already says where it looked and what to do.
        let hint = if error.contains("; install") {
            ""
        } else {
            missing_hint
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
        // A training script checked whole runs each stage through every
        // step; its first few show the same kernels in a fraction of it.
        let remedy = if record.tool == Tool::Plain {
            "raise --plain-timeout"
        } else if super::hook::steps_would_shorten(record) {
            "raise --timeout, or check a PyTorch program's first optimizer steps only (--steps 3)"
        } else {
            "raise --timeout"
        };
        let how = if record.killed {
            "killed (it ignored SIGTERM)"
        } else {
            "stopped"
        };
        return Some((
            Outcome::Inconclusive,
            format!(
                "timed out after {:.0}s and was {how}; {remedy}",
                record.timeout_seconds
            ),
        ));
    }
    None
}

pub fn describe_end(end: ProcessEnd) -> String {
    match end {
        ProcessEnd::Exited(0) => "exited 0".into(),
        ProcessEnd::Exited(code) => format!("exited {code}"),
        ProcessEnd::Signaled(sig) => format!("was killed by signal {sig}"),
        ProcessEnd::NotStarted => "never started".into(),
    }
}
