//! Judging: what a report adds up to under a policy. Suppressions and the
//! baseline mark what is accepted ([`accept`]); [`judge`] then makes the
//! checklist, the verdict and the exit code from the same facts, for `run`,
//! `report`, `parse` and every renderer.

pub mod baseline;
pub mod blocked;
pub mod checklist;
pub mod consequences;
pub mod diff;
pub mod explain_links;
pub mod gate;
pub mod notes;
pub mod own_kernels;
pub mod owner;
pub mod policy;
pub mod severity;
pub mod suppress;
pub mod sweep;
pub mod verdict;

use cudawatch_model::{Judgement, Report};

pub use policy::{FailOn, GateScope, Policy, RacecheckWarnings, Thresholds};

/// Names each finding's owner, links consequences to their root cause, and marks the findings the policy accepts:
/// suppressed by a rule, or already in the baseline (a rule that expired
/// adds a warning instead).
pub fn accept(report: &mut Report, policy: &Policy) {
    forget_earlier_acceptance(report);
    owner::assign(report);
    severity::judge(report, policy);
    consequences::link(report);
    explain_links::link(report);
    if let Some(rules) = &policy.suppressions {
        suppress::apply(report, rules, &policy.today);
    }
    if let Some(known) = &policy.baseline {
        baseline::apply(report, known);
    }
    blocked::mark(report, policy);
}

/// A saved report keeps the marks of the judgement it was saved with (its
/// suppressions, its baseline, their expiry warnings): cleared, so that
/// this policy alone decides what is accepted, as `severity` starts from
/// the tools' own levels. Otherwise a report saved under suppressions
/// would keep hiding their findings when judged again without them.
fn forget_earlier_acceptance(report: &mut Report) {
    for site in &mut report.findings {
        site.suppressed = None;
        site.in_baseline = false;
    }
    report
        .warnings
        .retain(|w| w.source != suppress::WARNING_SOURCE);
}

/// The checklist, verdict and exit code of a report under `policy`.
pub fn judge(report: &Report, policy: &Policy) -> Judgement {
    let checklist = checklist::judge(report, policy);
    let facts = gate::Facts::of(report, &checklist, policy);
    Judgement {
        verdict: verdict::lines(&facts, report, policy),
        exit_code: facts.exit_code(),
        out_of_scope: report
            .findings
            .iter()
            .filter(|s| !policy.in_scope(s))
            .map(|s| s.id.clone())
            .collect(),
        gating: facts.gating.iter().map(|s| s.id.clone()).collect(),
        checklist,
    }
}
