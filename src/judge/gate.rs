//! The gate: the facts of a report that decide its exit code, gathered
//! once, so the verdict a person reads ([`super::verdict`]) and the code a
//! CI system reads are two views of the same list.

use cudawatch_model::{CheckStatus, ChecklistItem, Outcome, Report, Severity, Site, StageReport};

use super::policy::{FailOn, Policy, is_open};
use crate::exit_codes::{self, worst};

/// What the gate looks at.
pub struct Facts<'a> {
    /// Open findings severe enough to fail under `--fail-on`.
    pub gating: Vec<&'a Site>,
    /// Open error findings in scope that do not fail (`--fail-on never`).
    pub open_errors_not_gating: usize,
    /// Open warnings and notes in scope that do not fail: listed, so the
    /// verdict may not call the run clean.
    pub open_warnings_not_gating: usize,
    /// Open findings outside the gate's scope (inside framework or library code).
    pub out_of_scope: usize,
    /// The failure the other sites follow from, when it gates.
    pub root_cause: Option<&'a Site>,
    /// Open sites that follow the root cause.
    pub consequences: usize,
    /// The plain run's crash, when the root cause (found by a sanitizer) explains it.
    pub explained_crash: Option<&'a Site>,
    /// Findings suppressed or already in the baseline.
    pub accepted: usize,
    /// Stages that could not really check the program.
    pub inconclusive: Vec<&'a str>,
    /// Stages that could not finish because of a failure already found (ncu
    /// cannot profile a faulting kernel; a sanitizer stops at the same
    /// assert): the run's verdict is the failure's, not inconclusive.
    pub blocked: Vec<&'a str>,
    /// The plain run's reason, when the program failed on its own and that fails the gate.
    pub target_failed: Option<&'a str>,
    /// Checklist items that fail, when failing items fail the gate.
    pub failed_checks: Vec<&'a str>,
    /// Checklist items that failed where the policy gates on nothing
    /// (`--fail-on never`): listed, so the run is never called clean.
    pub failed_checks_not_gating: Vec<&'a str>,
    /// Checklist items that could not be checked (shown, never gating).
    pub unchecked: Vec<&'a str>,
    /// Files of a parsed report that broke off.
    pub damaged_inputs: Vec<&'a str>,
    /// Every stage of the run was skipped (none applied to the program):
    /// nothing was checked, so the run cannot be clean.
    pub nothing_checked: bool,
    /// The user stopped the run.
    pub interrupted: bool,
}

impl<'a> Facts<'a> {
    /// Gathers the facts of `report` under `policy`.
    pub fn of(report: &'a Report, checklist: &'a [ChecklistItem], policy: &Policy) -> Facts<'a> {
        let gates_at_all = policy.fail_on != FailOn::Never;
        let titles = |status: CheckStatus| -> Vec<&'a str> {
            checklist
                .iter()
                .filter(|i| i.status == status)
                .map(|i| i.title.as_str())
                .collect()
        };
        // Parsed files have no stages: an input that broke off is what
        // makes such a report inconclusive.
        let damaged_inputs = if report.stages.is_empty() {
            report
                .warnings
                .iter()
                .filter(|w| report.inputs.iter().any(|i| i.path == w.source))
                .map(|w| w.source.as_str())
                .collect()
        } else {
            Vec::new()
        };
        let gating: Vec<&Site> = report.findings.iter().filter(|s| policy.gates(s)).collect();
        let (blocked, inconclusive): (Vec<&StageReport>, Vec<&StageReport>) = report
            .stages
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::Inconclusive | Outcome::ToolFailed))
            .partition(|s| s.blocked_by.is_some());
        let root_cause =
            super::consequences::root_cause(&report.findings).filter(|s| policy.gates(s));
        let follows = |s: &&Site| {
            root_cause.is_some_and(|r| s.consequence_of.as_deref() == Some(r.id.as_str()))
        };
        let consequences = report
            .findings
            .iter()
            .filter(|s| is_open(s) && follows(s))
            .count();
        let explained_crash = report
            .findings
            .iter()
            .filter(follows)
            .find(|s| s.tool == cudawatch_model::Tool::Plain);
        // Open root findings in the gate's scope that do not fail it, of
        // error severity or below it.
        let listed_not_gating = |errors: bool| {
            report
                .findings
                .iter()
                .filter(|s| {
                    is_open(s)
                        && s.consequence_of.is_none()
                        && policy.in_scope(s)
                        && (s.severity == Severity::Error) == errors
                        && !policy.gates(s)
                })
                .count()
        };
        let mut facts = Facts {
            root_cause,
            consequences,
            explained_crash,
            gating,
            open_errors_not_gating: listed_not_gating(true),
            open_warnings_not_gating: listed_not_gating(false),
            out_of_scope: report
                .findings
                .iter()
                .filter(|s| is_open(s) && !policy.in_scope(s))
                .count(),
            accepted: report.findings.iter().filter(|s| !is_open(s)).count(),
            inconclusive: inconclusive.iter().map(|s| s.tool.name()).collect(),
            blocked: blocked.iter().map(|s| s.tool.name()).collect(),
            target_failed: report
                .stages
                .iter()
                .find(|s| s.outcome == Outcome::TargetFailed && gates_at_all)
                .map(|s| s.reason.as_str()),
            failed_checks: if gates_at_all {
                titles(CheckStatus::Fail)
            } else {
                Vec::new()
            },
            failed_checks_not_gating: if gates_at_all {
                Vec::new()
            } else {
                titles(CheckStatus::Fail)
            },
            unchecked: titles(CheckStatus::Inconclusive),
            damaged_inputs,
            nothing_checked: !report.interrupted
                && !report.stages.is_empty()
                && report.stages.iter().all(|s| s.outcome == Outcome::Skipped),
            interrupted: report.interrupted,
        };
        facts.stopped_short_by_what_does_not_fail(report);
        facts
    }

    /// Stages stopped at the program's failure (blocked by it, or not run
    /// because of it) vouch for nothing after it. When that failure does
    /// not fail the gate (accepted in the baseline, suppressed), nothing
    /// else says the run is not clean: they are stages that could not
    /// check the program, and are named as such.
    fn stopped_short_by_what_does_not_fail(&mut self, report: &'a Report) {
        let fails = !self.gating.is_empty()
            || !self.failed_checks.is_empty()
            || self.target_failed.is_some();
        if fails {
            return;
        }
        let not_run = report
            .stages
            .iter()
            .filter(|s| s.not_run_for_a_failure())
            .map(|s| s.tool.name());
        let blocked = std::mem::take(&mut self.blocked);
        self.inconclusive.extend(blocked);
        self.inconclusive.extend(not_run);
    }

    /// The exit code these facts earn (see `exit_codes` for the ranking).
    pub fn exit_code(&self) -> i32 {
        Decision {
            fails: !self.gating.is_empty()
                || !self.failed_checks.is_empty()
                || self.target_failed.is_some(),
            unchecked: !self.inconclusive.is_empty()
                || !self.damaged_inputs.is_empty()
                || self.nothing_checked,
            interrupted: self.interrupted,
        }
        .exit_code()
    }
}

/// What a run's facts or a sweep's rows add up to: the one place an exit
/// code is decided (`exit_codes` ranks them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Something the gate fails on was found (a run) or a target is not as
    /// expected (a sweep).
    pub fails: bool,
    /// Something was not checked to its end.
    pub unchecked: bool,
    /// The user stopped it.
    pub interrupted: bool,
}

impl Decision {
    /// The exit code: interrupted over inconclusive over findings over clean.
    pub fn exit_code(&self) -> i32 {
        let mut code = exit_codes::CLEAN;
        if self.fails {
            code = worst(code, exit_codes::FINDINGS);
        }
        if self.unchecked {
            code = worst(code, exit_codes::INCONCLUSIVE);
        }
        if self.interrupted {
            code = worst(code, exit_codes::INTERRUPTED);
        }
        code
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::{accept, judge};
    use cudawatch_model::{FindingKind, Tool};
    use cudawatch_parsers::site::new_site;

    fn report_with(severity: Severity) -> Report {
        let mut report = Report::new("test");
        report.findings.push(new_site(
            Tool::Ncu,
            FindingKind::UncoalescedAccess,
            severity,
            "m".into(),
        ));
        report
    }

    fn code(report: &Report, fail_on: FailOn) -> i32 {
        judge(
            report,
            &Policy {
                fail_on,
                ..Policy::default()
            },
        )
        .exit_code
    }

    #[test]
    fn fail_on_sets_the_severity_that_fails_the_gate() {
        assert_eq!(
            code(&report_with(Severity::Warning), FailOn::Error),
            exit_codes::CLEAN
        );
        assert_eq!(
            code(&report_with(Severity::Warning), FailOn::Warning),
            exit_codes::FINDINGS
        );
        assert_eq!(
            code(&report_with(Severity::Error), FailOn::Never),
            exit_codes::CLEAN
        );
        assert_eq!(
            code(&report_with(Severity::Note), FailOn::Note),
            exit_codes::FINDINGS
        );
    }

    #[test]
    fn findings_already_in_the_baseline_do_not_fail() {
        let baseline = report_with(Severity::Error);
        let mut report = report_with(Severity::Error);
        report.findings[0].id = baseline.findings[0].id.clone();
        report.findings.push(new_site(
            Tool::Memcheck,
            FindingKind::Leak,
            Severity::Error,
            "new".into(),
        ));
        report.findings[1].id = "leak-new".into();
        let policy = Policy {
            baseline: Some(baseline.findings.iter().map(|s| s.id.clone()).collect()),
            ..Policy::default()
        };
        accept(&mut report, &policy);
        assert!(report.findings[0].in_baseline && !report.findings[1].in_baseline);
        assert_eq!(judge(&report, &policy).exit_code, exit_codes::FINDINGS);
        report.findings.pop();
        assert_eq!(judge(&report, &policy).exit_code, exit_codes::CLEAN);
    }

    #[test]
    fn suppressed_findings_do_not_fail_and_interruption_wins() {
        let mut report = report_with(Severity::Error);
        report.findings[0].suppressed = Some("known".into());
        assert_eq!(code(&report, FailOn::Error), exit_codes::CLEAN);
        report.interrupted = true;
        assert_eq!(code(&report, FailOn::Error), exit_codes::INTERRUPTED);
    }
}
