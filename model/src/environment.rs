//! What `cudawatch doctor` found about the machine: each check with its
//! status and fix. A run embeds it, so that a report says what the
//! environment was, and a stage whose tool doctor found broken is never
//! called clean.

use serde::{Deserialize, Serialize};

use crate::Tool;

/// Doctor's findings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// Every check, in the order doctor makes them.
    pub checks: Vec<EnvCheck>,
    /// Whether the tools were really run on this GPU (probes), or only
    /// their versions read.
    pub probed: bool,
    /// When the probes ran (RFC 3339), when they come from doctor's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probed_at: Option<String>,
}

/// One check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvCheck {
    /// Stable id, e.g. `driver_vs_torch`.
    pub id: String,
    /// What was checked.
    pub title: String,
    /// The verdict.
    pub status: EnvStatus,
    /// What was seen, in one line.
    pub detail: String,
    /// What to do, in one line, when not ok.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// The tools this check found unable to check anything here: their
    /// stages cannot be clean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breaks: Vec<Tool>,
}

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvStatus {
    /// Fine.
    Ok,
    /// Not checked (nothing to check it with), said why.
    Skipped,
    /// Works, but changes what the tools see or costs time.
    Warning,
    /// Stops programs or tools from working.
    Problem,
}

impl EnvStatus {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            EnvStatus::Ok => "ok",
            EnvStatus::Skipped => "skipped",
            EnvStatus::Warning => "warning",
            EnvStatus::Problem => "problem",
        }
    }
}
