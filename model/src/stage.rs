//! How each stage of a run ended: the process, and the outcome judged from it.

use serde::{Deserialize, Serialize};

use crate::{Tool, ToolSummary};

/// How a stage ended, ranked from best to worst for the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The stage ran and found nothing.
    Clean,
    /// The stage was not run (not selected, or the run stopped first).
    Skipped,
    /// The target program failed on its own (plain run), with nothing else to say.
    TargetFailed,
    /// The stage ran and found problems.
    Findings,
    /// The stage could not really check anything: the tool is missing, never
    /// attached, timed out, or left truncated output. Never clean.
    Inconclusive,
    /// The tool itself broke (bad flags, crashed).
    ToolFailed,
}

impl Outcome {
    /// Lower-case name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Clean => "clean",
            Outcome::Skipped => "skipped",
            Outcome::TargetFailed => "target failed",
            Outcome::Findings => "findings",
            Outcome::Inconclusive => "inconclusive",
            Outcome::ToolFailed => "tool failed",
        }
    }
}

/// How a process ended, as data rather than a platform `ExitStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", content = "code", rename_all = "snake_case")]
pub enum ProcessEnd {
    /// Exit code.
    Exited(i32),
    /// Killed by this signal number.
    Signaled(i32),
    /// Never started (the tool could not be spawned).
    NotStarted,
}

impl std::fmt::Display for ProcessEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessEnd::Exited(code) => write!(f, "exit {code}"),
            ProcessEnd::Signaled(sig) => write!(f, "signal {sig}"),
            ProcessEnd::NotStarted => f.write_str("not started"),
        }
    }
}

/// One stage of a run, as the report tells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageReport {
    /// The tool of the stage.
    pub tool: Tool,
    /// How it ended.
    pub outcome: Outcome,
    /// Why, in one line a user can act on.
    pub reason: String,
    /// The process's end, if it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<ProcessEnd>,
    /// Wall time in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// The command line, as run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Environment cudawatch set for this stage, `NAME=value`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// A sanitizer's options that left launches before or between the
    /// checked ones unchecked (`--launch-skip 1`, a kernel filter), as run:
    /// what those launches write, initcheck does not track, so reads of it
    /// look uninitialised to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked_launches: Vec<String>,
    /// How much of the program the stage ran, when it was ended after its
    /// first steps: none when it ran the program to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covered: Option<StepsCovered>,
    /// The summary lines the tool printed.
    #[serde(default)]
    pub summary: ToolSummary,
    /// Raw artifacts kept for this stage, relative to the run directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// Peak GPU memory used during the stage, in MiB, and the total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_mib: Option<(u64, u64)>,
    /// Set when judging: the stage did not finish because the program
    /// failed under it at a failure already found and gating (a device
    /// assert, an invalid access): it is blocked by that finding, which
    /// names it here, not inconclusive. Worked out anew at every judging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<String>,
    /// The last lines the program wrote on stderr, when the plain run
    /// failed: what a person looks at first (the whole file is an artifact).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr_tail: Vec<String>,
    /// The tries before the one this stage reports, in order: why each ran
    /// again, where it is kept, whether its findings were judged, and how
    /// many sites only it saw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
}

/// The first steps of a program a stage ran before it ended the program
/// there (a training script's first optimizer steps, or, in a program that
/// builds no optimizer, its first model calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepsCovered {
    /// How many.
    pub count: u64,
    /// Optimizer steps, or model calls.
    pub unit: StepUnit,
    /// Whether cudawatch chose it (a tool stage's default) rather than the
    /// user (`--steps`).
    pub by_default: bool,
    /// How many optimizers stepped `count` times each, where the program
    /// had more than one (a GAN's two: steps are counted per optimizer).
    #[serde(default, skip_serializing_if = "is_one_or_less")]
    pub optimizers: u64,
    /// Optimizers the program built that had stepped fewer times when
    /// another's `8 x count` steps ended it (one built for a later phase).
    #[serde(default, skip_serializing_if = "crate::inputs::is_zero")]
    pub optimizers_behind: u64,
}

fn is_one_or_less(n: &u64) -> bool {
    *n <= 1
}

/// What a program's steps are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepUnit {
    /// `torch.optim` optimizer steps.
    OptimizerSteps,
    /// Calls of a `torch.nn.Module` outside any other (a program that
    /// builds no optimizer).
    ModelCalls,
}

impl StepsCovered {
    /// `its first 2 optimizer steps`; `its first step of each of its 2
    /// optimizers`.
    pub fn words(&self) -> String {
        if self.unit == StepUnit::OptimizerSteps {
            let steps = if self.count == 1 {
                "step".to_string()
            } else {
                format!("{} steps", self.count)
            };
            if self.optimizers_behind > 0 {
                let others = match self.optimizers_behind {
                    1 => "1 other".to_string(),
                    n => format!("{n} others"),
                };
                return format!(
                    "its first {steps} of one optimizer ({others} it built stepped fewer times)"
                );
            }
            if self.optimizers > 1 {
                return format!(
                    "its first {steps} of each of its {} optimizers",
                    self.optimizers
                );
            }
        }
        let unit = match (self.unit, self.count) {
            (StepUnit::OptimizerSteps, 1) => "optimizer step",
            (StepUnit::OptimizerSteps, _) => "optimizer steps",
            (StepUnit::ModelCalls, 1) => "model call",
            (StepUnit::ModelCalls, _) => "model calls",
        };
        if self.count == 1 {
            format!("its first {unit}")
        } else {
            format!("its first {} {unit}", self.count)
        }
    }
}

/// An earlier try of a stage that was run again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// Why it was run again.
    pub reason: String,
    /// Where its raw output is kept, in the run directory
    /// (`crashed/memcheck`); empty when it could not be kept.
    pub folder: String,
    /// Whether its findings were judged with the stage's (a tool that died
    /// or flooded: yes; a try under settings that failed the program, or
    /// crowded out beside other stages: no).
    pub judged: bool,
    /// Sites seen in this try and not in the one reported.
    #[serde(default)]
    pub sites_only_here: u64,
}

/// How the reason of a stage that nothing called for begins.
pub const NOT_NEEDED: &str = "not needed:";

/// How the reason of a stage not run because of the program's failure
/// begins (the plain run's out-of-memory error, a collective's timeout, a
/// device exception ncu would only profile up to).
pub const BLOCKED: &str = "blocked by ";

/// Whether a stage's reason says nothing called for it.
pub fn is_not_needed(reason: &str) -> bool {
    reason.starts_with(NOT_NEEDED)
}

impl StageReport {
    /// The outcome as shown: `blocked` when a finding stopped the stage.
    pub fn shown_outcome(&self) -> &'static str {
        if self.blocked_by.is_some() {
            "blocked"
        } else {
            self.outcome.name()
        }
    }

    /// A stage that did not run because nothing called for it (the core
    /// dump after a plain run that met no device exception): it checks
    /// nothing a run lacks without it, so the terminal leaves it out.
    pub fn not_needed(&self) -> bool {
        self.outcome == crate::Outcome::Skipped && is_not_needed(&self.reason)
    }

    /// A stage not run because of the program's failure: it checked
    /// nothing, so the run is clean only while that failure gates.
    pub fn not_run_for_a_failure(&self) -> bool {
        self.outcome == crate::Outcome::Skipped && self.reason.starts_with(BLOCKED)
    }

    /// The reason as shown: what blocked the stage, then the stage's own.
    pub fn shown_reason(&self) -> String {
        match &self.blocked_by {
            Some(by) => format!("{BLOCKED}{by}: {}", self.reason),
            None => self.reason.clone(),
        }
    }
}
