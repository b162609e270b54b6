//! Severity as the gate sees it, where the tool's own level is wrong for
//! today's GPUs: racecheck reports races between the lanes of one warp
//! (shared memory without `__syncwarp`) as warnings, from the days when a
//! warp ran in lockstep. Since sm_70 (independent thread scheduling) they
//! are real races, so in the user's kernels they are errors unless the
//! user says otherwise (`--racecheck-warnings report`). The tool's level is
//! kept beside the new one (`Site::tool_severity`), so every format can
//! say that cudawatch, not the tool, raised it. The oom-recovery stage's
//! "did not recover" is a warning unless the user asks it to gate
//! (`--gate-oom-recovery`).

use cudawatch_model::{FindingKind, Owner, Report, Severity, Tool};

use super::policy::{Policy, RacecheckWarnings};

/// Raises racecheck's warning-level races in the user's kernels to errors
/// (after owners are assigned), and a failed OOM-recovery test when the
/// user asked for it to gate. Starts from the tools' own levels, so a
/// saved report judged again under other settings comes out right.
pub fn judge(report: &mut Report, policy: &Policy) {
    for site in &mut report.findings {
        if let Some(level) = site.tool_severity.take() {
            site.severity = level;
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
