//! The gate: the exit code a report earns, decided in one place for `run`,
//! `report` and `parse` alike.

use cudawatch_parsers::model::{Outcome, Report, Severity};

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
        .any(|s| s.suppressed.is_none() && fail_on.fails(s.severity))
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
    fn suppressed_findings_do_not_fail_and_interruption_wins() {
        let mut report = report_with(Severity::Error);
        report.findings[0].suppressed = Some("known".into());
        assert_eq!(exit_code(&report, FailOn::Error), exit_codes::CLEAN);
        report.interrupted = true;
        assert_eq!(exit_code(&report, FailOn::Error), exit_codes::INTERRUPTED);
    }
}
