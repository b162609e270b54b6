//! What the supervisor writes about a run (`run.json`); each stage's
//! `stage.json` is a `tools::StageRecord`.

use cudawatch_model::Tool;
use serde::{Deserialize, Serialize};

/// What the run was.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    /// cudawatch's version.
    pub cudawatch_version: String,
    /// The program and its arguments.
    pub target: Vec<String>,
    /// Stages in order.
    pub stages: Vec<Tool>,
    /// Set when the user stopped the run.
    #[serde(default)]
    pub interrupted: bool,
    /// How the tool stages were run: how many at once, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// The project's folder where the run was made (its source root, its
    /// links resolved): a run directory read on another machine, or in
    /// another clone, names the project's files from it, as it was read
    /// where it was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_root: Option<String>,
    /// The program's own kernels whose names a library's carry, found in
    /// its binaries before the stages (`Report::own_kernels`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_kernels: Vec<String>,
    /// That search stopped at its limits: a kernel of the program's in a
    /// binary it did not read may have been left out by name (a report
    /// warning says so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_kernel_search_cut_short: bool,
}
