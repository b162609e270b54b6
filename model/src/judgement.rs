//! What judging a report under a policy gives: the checklist, the verdict
//! and the exit code, decided together so they cannot disagree.

use serde::{Deserialize, Serialize};

/// One pre-deployment check and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChecklistItem {
    /// Stable id, e.g. `memcheck_clean`.
    pub id: String,
    /// What is checked, for people.
    pub title: String,
    /// The verdict.
    pub status: CheckStatus,
    /// Why, in one line.
    pub evidence: String,
}

/// A checklist verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Checked and fine.
    Pass,
    /// Checked and not fine.
    Fail,
    /// Could not be checked: its stage ran but was inconclusive, the run
    /// was interrupted first, or there was no data.
    Inconclusive,
    /// Not checked because its stage was not selected (`--stages`): a
    /// choice, not a failure, and never a pass.
    Skipped,
}

impl CheckStatus {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "fail",
            CheckStatus::Inconclusive => "inconclusive",
            CheckStatus::Skipped => "skipped",
        }
    }
}

/// A report judged under a policy: the checklist, the verdict a person
/// reads and the exit code a CI system reads, made by one function from the
/// same facts, so the printed verdict and the exit code cannot disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// The pre-deployment checklist (runs only; empty for parsed files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checklist: Vec<ChecklistItem>,
    /// What the report adds up to, in the lines every format prints.
    pub verdict: Vec<VerdictLine>,
    /// The exit code of the gate (see `docs/exit-codes.md`).
    pub exit_code: i32,
    /// Sites reported but outside the gate's scope (hazards and coalescing
    /// inside framework or library code, under `--gate-scope user`): the
    /// human formats fold them into one line per component.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_of_scope: Vec<String>,
    /// Sites that fail the gate: the formats that mark findings as failures
    /// (JUnit) mark these and only these, so they agree with the exit code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gating: Vec<String>,
}

/// One line of the verdict: a label and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictLine {
    /// What kind of line it is.
    pub label: VerdictLabel,
    /// The sentence after the label.
    pub text: String,
}

/// The label of a verdict line; renderers colour by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictLabel {
    /// Nothing found, everything checked that was asked for.
    Clean,
    /// Findings exist, but none fails the gate under this policy.
    Passed,
    /// Findings fail the gate.
    Findings,
    /// No finding fails, but a checklist item or the program itself does.
    Failed,
    /// Something could not really be checked: never clean.
    Inconclusive,
    /// The user stopped the run.
    Interrupted,
}

impl VerdictLabel {
    /// The label as printed, `CLEAN:`.
    pub fn heading(self) -> &'static str {
        match self {
            VerdictLabel::Clean => "CLEAN:",
            VerdictLabel::Passed => "PASSED:",
            VerdictLabel::Findings => "FINDINGS:",
            VerdictLabel::Failed => "FAILED:",
            VerdictLabel::Inconclusive => "INCONCLUSIVE:",
            VerdictLabel::Interrupted => "INTERRUPTED:",
        }
    }
}
