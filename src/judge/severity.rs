//! Severity as the gate sees it, where the tool's own level is wrong for
//! today's GPUs: racecheck reports races between the lanes of one warp
//! (shared memory without `__syncwarp`) as warnings, from the days when a
//! warp ran in lockstep. Since sm_70 (independent thread scheduling) they
//! are real races, so in the user's kernels they are errors unless the
//! user says otherwise (`--racecheck-warnings report`). The tool's level is
//! kept beside the new one (`Site::tool_severity`), so every format can
//! say that cudawatch, not the tool, raised it; initcheck's reads that
//! may be its own blind spot (`Site::doubt`) are lowered to warnings. The
//! oom-recovery stage's
//! "did not recover" is a warning unless the user asks it to gate
//! (`--gate-oom-recovery`).

use cudawatch_model::{
    FindingKind, Outcome, Owner, ProcessEnd, Report, Severity, Tool, ToolSummary,
};

use super::explain_links::knowledge;
use super::policy::{Policy, RacecheckWarnings};

/// Raises racecheck's warning-level races in the user's kernels to errors
/// (after owners are assigned), and a failed OOM-recovery test when the
/// user asked for it to gate. Starts from the tools' own levels, so a
/// saved report judged again under other settings comes out right.
pub fn judge(report: &mut Report, policy: &Policy) {
    let finished: Vec<Tool> = Tool::SANITIZERS
        .into_iter()
        .filter(|t| finished_normally(report, *t))
        .collect();
    for site in &mut report.findings {
        if let Some(level) = site.tool_severity.take() {
            site.severity = level;
        }
        // initcheck cannot see what Hopper library kernels wrote (the
        // doubt owner.rs sets): a read of their output in the user's own
        // kernel (a Triton epilogue after a bf16 matmul) may be one, so it
        // is listed as a warning with the doubt, not a gating error;
        // `--fail-on warning` gates it.
        if site.doubt.is_some() && site.severity == Severity::Error {
            site.tool_severity = Some(Severity::Error);
            site.severity = Severity::Warning;
            continue;
        }
        // A record of a kind this cudawatch does not know (a newer tool's):
        // listed, and named on the verdict line, never a gating error of
        // nobody's (issue 57: a false FINDINGS on a correct script).
        if site.kind == FindingKind::Unrecognised && site.severity == Severity::Error {
            site.tool_severity = Some(Severity::Error);
            site.severity = Severity::Warning;
            continue;
        }
        // A returned error the program checked and got past (it went on
        // and finished normally under the tool) is not a crash: a program
        // that probes cudaMalloc sizes until one fits does this on purpose.
        // A sticky error cannot be got past, so it stays an error.
        if site.kind == FindingKind::ApiError
            && site.severity == Severity::Error
            && finished.contains(&site.tool)
            && !site.error.as_deref().is_some_and(is_sticky)
        {
            site.tool_severity = Some(Severity::Error);
            site.severity = Severity::Warning;
            continue;
        }
        let users = site.owner.as_ref().is_some_and(|o| o.owner == Owner::User);
        let raise = match (site.tool, &site.kind) {
            (Tool::Racecheck, FindingKind::Race | FindingKind::Hazard) => {
                policy.racecheck_warnings == RacecheckWarnings::Gate && users
            }
            (Tool::OomRecovery, FindingKind::OomNotRecovered) => policy.gate_oom_recovery,
            _ => false,
        };
        if raise && site.severity == Severity::Warning {
            site.tool_severity = Some(Severity::Warning);
            site.severity = Severity::Error;
        }
    }
}

/// Whether the program finished normally under this sanitizer: the tool
/// printed its summary, did not say the program failed or that it could
/// not follow it, and (in a run) its stage rule found its end consistent
/// (clean or findings) and the plain run exited 0. Without the tool's text
/// (an XML alone) nothing says so.
fn finished_normally(report: &Report, tool: Tool) -> bool {
    let normal = |s: &ToolSummary| {
        s.has_closing_line() && !s.target_failed && s.failures.is_empty() && s.cut_records == 0
    };
    if let Some(stage) = report.stages.iter().find(|s| s.tool == tool) {
        let consistent = matches!(stage.outcome, Outcome::Clean | Outcome::Findings);
        let plain_ok = report
            .stages
            .iter()
            .find(|s| s.tool == Tool::Plain)
            .is_none_or(|p| p.end == Some(ProcessEnd::Exited(0)));
        return consistent && plain_ok && normal(&stage.summary);
    }
    let mut texts = report
        .inputs
        .iter()
        .filter(|i| i.tool == tool)
        .filter_map(|i| i.summary.as_ref())
        .peekable();
    texts.peek().is_some() && texts.all(normal)
}

/// Whether an error leaves the CUDA context broken (the header says the
/// process must be restarted): no program gets past one.
fn is_sticky(error: &str) -> bool {
    knowledge()
        .explain(error)
        .explanations
        .iter()
        .any(|e| e.sticky)
}
