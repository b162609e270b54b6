//! What the supervisor saw of one stage (`stage.json`): the facts each
//! kind's outcome rules start from, with what the stage left in its folder.

use cudawatch_model::{ProcessEnd, Tool};
use serde::{Deserialize, Serialize};

/// What the supervisor saw of one stage.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRecord {
    /// The stage's tool.
    pub tool: Tool,
    /// Command line.
    pub command: Vec<String>,
    /// Environment cudawatch set (`NAME=value`, `-NAME` for removed).
    pub env: Vec<String>,
    /// How the main process ended.
    pub end: ProcessEnd,
    /// Wall time.
    pub seconds: f64,
    /// The timeout it ran under.
    pub timeout_seconds: f64,
    /// Stopped at the deadline.
    #[serde(default)]
    pub timed_out: bool,
    /// Stopped by the user.
    #[serde(default)]
    pub interrupted: bool,
    /// Needed SIGKILL.
    #[serde(default)]
    pub killed: bool,
    /// Something of its process group outlived it.
    #[serde(default)]
    pub left_behind: bool,
    /// Could not be started.
    #[serde(default)]
    pub spawn_error: Option<String>,
    /// No `stage.json` was ever written: cudawatch itself was stopped
    /// (SIGKILL, the OOM killer, a lost machine) while the stage ran. Never
    /// written by the supervisor; made up when a run directory is read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unfinished: bool,
    /// Why the stage does not apply to this program (never run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
    /// Peak and total GPU memory in MiB (plain stage).
    #[serde(default)]
    pub gpu_memory_mib: Option<(u64, u64)>,
    /// Whether the only process of the stage seen on a GPU was the one it
    /// started (the plain run's says whether ncu must follow children).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_leader_only: Option<bool>,
    /// ncu's imports of its report as CSV pages: (file written, how it ended).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<(String, ProcessEnd)>,
    /// What went wrong beside the stage and is worth a warning in the
    /// report (a hung nvidia-smi while measuring GPU memory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Other processes that used the GPU while the stage ran, with their
    /// peak memory: named when a tool ran out of GPU memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_others: Vec<OtherProcess>,
}

/// A process outside the stage seen using GPU memory while it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherProcess {
    /// Its process id.
    pub pid: u32,
    /// Its command line's first words, when they could be read.
    pub command: String,
    /// The most GPU memory it held, MiB.
    pub mib: u64,
}

impl StageRecord {
    /// The record of a stage whose folder exists but which never recorded
    /// how it ended: what it wrote is read, and it cannot be clean.
    pub fn unfinished(tool: Tool) -> StageRecord {
        StageRecord {
            tool,
            command: Vec::new(),
            env: Vec::new(),
            end: ProcessEnd::NotStarted,
            seconds: 0.0,
            timeout_seconds: 0.0,
            timed_out: false,
            interrupted: false,
            killed: false,
            left_behind: false,
            spawn_error: None,
            unfinished: true,
            not_applicable: None,
            gpu_memory_mib: None,
            gpu_leader_only: None,
            imports: Vec::new(),
            notes: Vec::new(),
            gpu_others: Vec::new(),
        }
    }
}
