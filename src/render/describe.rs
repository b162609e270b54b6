//! Sentences more than one format says the same way: a thread sample, where
//! a kernel was launched from, the overall verdict. Kept here so the
//! terminal and HTML reports cannot drift apart.

use std::fmt::Write as _;

use cudawatch_parsers::model::{CheckStatus, Frame, Outcome, Report, Sample, Severity, Site};

/// `thread (232,0,0) block (3,0,0) address 0x7fa5…, 1 bytes after the
/// 4000-byte allocation at 0x7fa5…`; empty when the sample has nothing.
pub fn sample_line(s: &Sample) -> String {
    let mut line = String::new();
    if let (Some(t), Some(b)) = (s.thread, s.block) {
        let _ = write!(line, "thread {t} block {b}");
    }
    if let Some(a) = s.address {
        let _ = write!(line, " address {a:#x}");
    }
    if let Some(n) = &s.nearest_allocation {
        let _ = match n.relation.as_str() {
            "inside" => write!(
                line,
                ", inside the {}-byte allocation at {:#x}",
                n.size, n.base
            ),
            rel => write!(
                line,
                ", {} bytes {rel} the {}-byte allocation at {:#x}",
                n.distance, n.size, n.base
            ),
        };
    }
    line.trim().to_string()
}

/// The Python frame of the user's code if there is one, else the native
/// frame that launched the kernel.
pub fn launched_from(site: &Site) -> Option<Frame> {
    site.python_frame
        .clone()
        .or_else(|| site.launch_frame.clone())
}

/// What the report adds up to, before any `--fail-on` policy.
pub struct Verdict<'a> {
    /// Error sites that are neither suppressed nor in the baseline.
    pub errors: usize,
    /// Stages that could not really check the program.
    pub inconclusive: Vec<&'a str>,
    /// Checklist items that fail (they fail the gate too).
    pub failed_checks: Vec<&'a str>,
    /// Checklist items that could not be checked.
    pub unchecked: Vec<&'a str>,
}

impl<'a> Verdict<'a> {
    /// Counts the report's open errors and inconclusive stages.
    pub fn of(report: &'a Report) -> Self {
        Verdict {
            errors: report
                .findings
                .iter()
                .filter(|s| {
                    s.severity == Severity::Error && s.suppressed.is_none() && !s.in_baseline
                })
                .count(),
            inconclusive: report
                .stages
                .iter()
                .filter(|s| matches!(s.outcome, Outcome::Inconclusive | Outcome::ToolFailed))
                .map(|s| s.tool.name())
                .collect(),
            failed_checks: titles(report, CheckStatus::Fail),
            unchecked: titles(report, CheckStatus::Inconclusive),
        }
    }

    /// Whether anything here fails the gate under the default policy.
    pub fn fails(&self) -> bool {
        self.errors > 0 || !self.failed_checks.is_empty()
    }

    /// The inconclusive sentence (without its label).
    pub fn inconclusive_line(&self) -> String {
        format!(
            "{} could not really check the program: not clean",
            self.inconclusive.join(", ")
        )
    }

    /// The label and sentence about findings; `None` when an inconclusive
    /// stage and no errors leave nothing to claim.
    pub fn findings_line(&self, report: &Report) -> (&'static str, Option<String>) {
        let checks = (!self.failed_checks.is_empty())
            .then(|| format!("failed checks: {}", self.failed_checks.join(", ")));
        if self.errors > 0 {
            let errors = format!("{} error sites", self.errors);
            let line = match checks {
                Some(checks) => format!("{errors}; {checks}"),
                None => errors,
            };
            ("FINDINGS:", Some(line))
        } else if let Some(checks) = checks {
            ("FAILED:", Some(format!("no error sites, but {checks}")))
        } else if !self.inconclusive.is_empty() {
            ("CLEAN:", None)
        } else {
            // Clean as far as it was checked: say what was not.
            let mut line = String::from("no errors found");
            if !report.warnings.is_empty() {
                line.push_str(", with the warnings above");
            }
            if !self.unchecked.is_empty() {
                line.push_str(&format!("; not checked: {}", self.unchecked.join(", ")));
            }
            ("CLEAN:", Some(line))
        }
    }
}

/// The titles of the checklist items with this status.
fn titles(report: &Report, status: CheckStatus) -> Vec<&str> {
    report
        .checklist
        .iter()
        .filter(|i| i.status == status)
        .map(|i| i.title.as_str())
        .collect()
}

/// `text` cut to `max` characters, with `…` where it was cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}
