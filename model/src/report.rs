//! The combined report of every tool.

use serde::{Deserialize, Serialize};

use crate::{Input, KernelCoalescing, LineSectors, SCHEMA_VERSION, Site, StageReport, Warning};

/// The combined report of every tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// See [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// cudawatch's version.
    pub cudawatch_version: String,
    /// The program that was run, if this report is of a run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target: Vec<String>,
    /// The stages of the run, in order; empty for `cudawatch parse`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageReport>,
    /// Every file that went into the report.
    pub inputs: Vec<Input>,
    /// Findings grouped by site, worst first.
    pub findings: Vec<Site>,
    /// Coalescing per profiled kernel launch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coalescing: Vec<KernelCoalescing>,
    /// Source lines that waste the most sectors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wasteful_lines: Vec<LineSectors>,
    /// What PyTorch's allocator held (the memory stage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::MemoryReport>,
    /// What limits trust in this report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// What cudawatch changed about how the program ran, and why (PyTorch's
    /// caching allocator off under the sanitizers): worth knowing, not a
    /// limit on the report, so the verdict does not count them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Warning>,
    /// What `cudawatch doctor` found about the machine the run ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::Environment>,
    /// The user stopped the run (Ctrl-C, SIGTERM): later stages did not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl Report {
    /// An empty report of this cudawatch version.
    pub fn new(cudawatch_version: &str) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            cudawatch_version: cudawatch_version.to_string(),
            target: Vec::new(),
            stages: Vec::new(),
            inputs: Vec::new(),
            findings: Vec::new(),
            coalescing: Vec::new(),
            wasteful_lines: Vec::new(),
            memory: None,
            warnings: Vec::new(),
            notes: Vec::new(),
            environment: None,
            interrupted: false,
        }
    }
}
