//! The gate: the exit code a report earns, decided in one place for `run`,
//! `report` and `parse` alike.

use cudawatch_parsers::model::{CheckStatus, Outcome, Report, Severity};

use crate::cli::FailOn;
use crate::exit_codes::{self, worst};

impl FailOn {
    /// Whether a finding of `severity` fails the gate.
    pub fn fails(self, severity: Severity) -> bool {
        match self {
            FailOn::Error => severity >= Severity::Error,
            FailOn::Warning => severity >= Severity::Warning,
            FailOn::Note => true,
            FailOn::Never => false,
        }
    }
}

/// Marks the sites of `report` that `baseline` already had (by their
/// stable id), so only new ones fail the gate.
pub fn apply_baseline(report: &mut Report, baseline: &Report) {
    let known: std::collections::HashSet<&str> =
        baseline.findings.iter().map(|s| s.id.as_str()).collect();
    for site in &mut report.findings {
        site.in_baseline = known.contains(site.id.as_str());
    }
}

/// Reads a JSON report written by cudawatch (`report.json`, `--format json`).
pub fn read_report(path: &std::path::Path) -> Result<Report, crate::errors::ExpectedError> {
    let text = std::fs::read_to_string(path).map_err(|e| crate::errors::ExpectedError::Input {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| crate::errors::ExpectedError::Input {
        path: path.display().to_string(),
        message: format!("not a cudawatch JSON report: {e}"),
    })
}

/// The exit code of a report (see `exit_codes` for the ranking).
pub fn exit_code(report: &Report, fail_on: FailOn) -> i32 {
    let mut code = exit_codes::CLEAN;
    for stage in &report.stages {
        match stage.outcome {
            Outcome::Inconclusive | Outcome::ToolFailed => {
                code = worst(code, exit_codes::INCONCLUSIVE)
            }
            Outcome::TargetFailed if fail_on != FailOn::Never => {
                code = worst(code, exit_codes::FINDINGS)
            }
            _ => {}
        }
    }
    if report
        .findings
        .iter()
        .any(|s| s.suppressed.is_none() && !s.in_baseline && fail_on.fails(s.severity))
    {
        code = worst(code, exit_codes::FINDINGS);
    }
    if fail_on != FailOn::Never
        && report
            .checklist
            .iter()
            .any(|i| i.status == CheckStatus::Fail)
    {
        code = worst(code, exit_codes::FINDINGS);
    }
    // Parsed files have no stages: an input that broke off is what makes
    // such a report inconclusive.
    let input_damaged = report
        .warnings
        .iter()
        .any(|w| report.inputs.iter().any(|i| i.path == w.source));
    if report.stages.is_empty() && input_damaged {
        code = worst(code, exit_codes::INCONCLUSIVE);
    }
    if report.interrupted {
        code = worst(code, exit_codes::INTERRUPTED);
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudawatch_parsers::model::{FindingKind, Tool};
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

    #[test]
    fn fail_on_sets_the_severity_that_fails_the_gate() {
        assert_eq!(
            exit_code(&report_with(Severity::Warning), FailOn::Error),
            exit_codes::CLEAN
        );
        assert_eq!(
            exit_code(&report_with(Severity::Warning), FailOn::Warning),
            exit_codes::FINDINGS
        );
        assert_eq!(
            exit_code(&report_with(Severity::Error), FailOn::Never),
            exit_codes::CLEAN
        );
        assert_eq!(
            exit_code(&report_with(Severity::Note), FailOn::Note),
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
        apply_baseline(&mut report, &baseline);
        assert!(report.findings[0].in_baseline && !report.findings[1].in_baseline);
        assert_eq!(exit_code(&report, FailOn::Error), exit_codes::FINDINGS);
        report.findings.pop();
        assert_eq!(exit_code(&report, FailOn::Error), exit_codes::CLEAN);
    }

    #[test]
    fn suppressed_findings_do_not_fail_and_interruption_wins() {
        let mut report = report_with(Severity::Error);
        report.findings[0].suppressed = Some("known".into());
        assert_eq!(exit_code(&report, FailOn::Error), exit_codes::CLEAN);
        report.interrupted = true;
        assert_eq!(exit_code(&report, FailOn::Error), exit_codes::INTERRUPTED);
    }
}
