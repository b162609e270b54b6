//! `cudawatch diff OLD NEW` judged: which sites are new, fixed or
//! unchanged between two reports, by their stable ids (addresses, threads
//! and absolute paths are not part of an id, so reruns match), and the exit
//! code that says so, through the same [`Decision`] as a run's.

use std::collections::HashSet;

use cudawatch_model::{InputKind, Outcome, Report, ReportDiff, Site, Tool};

use super::Policy;
use super::gate::Decision;

/// The tools that checked NEW to the end: a stage that ended clean or with
/// findings, or (for a report of parsed files, which has no stages) a tool
/// output read without a warning against it.
fn rechecked(report: &Report) -> HashSet<Tool> {
    if report.stages.is_empty() {
        return report
            .inputs
            .iter()
            .filter(|i| i.kind != InputKind::ProgramOutput)
            .filter(|i| !report.warnings.iter().any(|w| w.source == i.path))
            .map(|i| i.tool)
            .collect();
    }
    report
        .stages
        .iter()
        .filter(|s| matches!(s.outcome, Outcome::Clean | Outcome::Findings))
        .map(|s| s.tool)
        .collect()
}

/// OLD and NEW compared site by site.
pub fn compare(old: &Report, new: &Report) -> ReportDiff {
    let old_ids: HashSet<&str> = old.findings.iter().map(|s| s.id.as_str()).collect();
    let new_ids: HashSet<&str> = new.findings.iter().map(|s| s.id.as_str()).collect();
    let checked = rechecked(new);
    let (fixed, not_rechecked): (Vec<&Site>, Vec<&Site>) = old
        .findings
        .iter()
        .filter(|s| !new_ids.contains(s.id.as_str()))
        .partition(|s| checked.contains(&s.tool));
    let (unchanged, new_only): (Vec<&Site>, Vec<&Site>) = new
        .findings
        .iter()
        .partition(|s| old_ids.contains(s.id.as_str()));
    let owned = |sites: Vec<&Site>| sites.into_iter().cloned().collect();
    ReportDiff {
        new: owned(new_only),
        fixed: owned(fixed),
        unchanged: owned(unchanged),
        not_rechecked: owned(not_rechecked),
    }
}

/// 1 when NEW has sites OLD did not at or above `--fail-on`; 3 when a site
/// OLD had may be gone only because its tool did not check NEW.
pub fn exit_code(diff: &ReportDiff, policy: &Policy) -> i32 {
    Decision {
        fails: diff.new.iter().any(|s| policy.gates(s)),
        unchecked: !diff.not_rechecked.is_empty(),
        interrupted: false,
    }
    .exit_code()
}
