//! Severity as the gate sees it, where the tool's own level is wrong for
//! today's GPUs: racecheck reports races between the lanes of one warp
//! (shared memory without `__syncwarp`) as warnings, from the days when a
//! warp ran in lockstep. Since sm_70 (independent thread scheduling) they
//! are real races, so in the user's kernels they are errors unless the
//! user says otherwise (`--racecheck-warnings report`). The tool's level is
//! kept beside the new one (`Site::tool_severity`), so every format can
//! say that cudawatch, not the tool, raised it.

use cudawatch_model::{FindingKind, Owner, Report, Severity, Tool};

use super::policy::{Policy, RacecheckWarnings};

/// Raises racecheck's warning-level races in the user's kernels to errors
/// (after owners are assigned).
pub fn judge(report: &mut Report, policy: &Policy) {
    if policy.racecheck_warnings == RacecheckWarnings::Report {
        // A saved report judged before under the default: the tool's level back.
        for site in &mut report.findings {
            if let Some(level) = site.tool_severity.take() {
                site.severity = level;
            }
        }
        return;
    }
    for site in &mut report.findings {
        let users = site.owner.as_ref().is_some_and(|o| o.owner == Owner::User);
        if site.tool == Tool::Racecheck
            && matches!(site.kind, FindingKind::Race | FindingKind::Hazard)
            && site.severity == Severity::Warning
            && users
        {
            site.tool_severity = Some(Severity::Warning);
            site.severity = Severity::Error;
        }
    }
}
