//! A sweep: many programs run by `cudawatch sweep`, merged into one
//! report: a row per target and the findings of all targets folded by
//! site, compared with an earlier night when one is given.

use serde::{Deserialize, Serialize};

use crate::{Site, VerdictLine};

/// The merged report of a sweep (`cudawatch sweep`, `cudawatch merge`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// See [`crate::SCHEMA_VERSION`].
    pub schema_version: u32,
    /// cudawatch's version.
    pub cudawatch_version: String,
    /// Identifies the sweep file's content: shards merge only with shards
    /// of the same id.
    pub sweep_id: String,
    /// The shards merged, `index/count` and the directory each came from.
    pub shards: Vec<ShardRef>,
    /// One row per target of the sweep file, in its order.
    pub targets: Vec<TargetResult>,
    /// Every finding of every target, one row per site, worst first.
    pub sites: Vec<SweepSite>,
    /// Sites the baseline had that no target has now.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed_sites: Vec<FixedSite>,
    /// What the sweep was compared with (a directory or history file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Earlier sweeps and this one, oldest first, for the trend.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryEntry>,
    /// What limits trust in the merge (missing shards, unreadable runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The user stopped the sweep (Ctrl-C, SIGTERM): targets running then
    /// are incomplete, the rest not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// What the sweep adds up to, in the lines every format prints.
    pub verdict: Vec<VerdictLine>,
    /// The exit code of the gate over every target.
    pub exit_code: i32,
}

/// One shard that went into a merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardRef {
    /// From 0.
    pub index: u32,
    /// How many shards the sweep was cut into.
    pub count: u32,
    /// The sweep directory it wrote.
    pub dir: String,
}

/// What the sweep file expects of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// Conclusive, nothing gates (exit 0).
    #[default]
    Clean,
    /// The gate fails on findings (exit 1): a program with a known bug,
    /// kept to prove the sweep still finds it.
    Findings,
    /// Clean or findings, as long as it is conclusive.
    Conclusive,
}

impl Expect {
    /// Lower-case name, as the sweep file spells it.
    pub fn name(self) -> &'static str {
        match self {
            Expect::Clean => "clean",
            Expect::Findings => "findings",
            Expect::Conclusive => "conclusive",
        }
    }
}

/// How a target stands against what the sweep file expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Finished as the sweep file expects.
    AsExpected,
    /// Finished and conclusive, but not as expected: a failure.
    NotAsExpected,
    /// Not checked to its end (incomplete, setup error, missing, or its
    /// run was inconclusive): an error, not a verdict on the program.
    #[default]
    Unchecked,
}

/// How far a target got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetState {
    /// Every stage ran; judged.
    Finished,
    /// Stopped by the budget, its timeout or the user: partial findings
    /// kept; the next `sweep` on the same directory runs it again.
    Incomplete,
    /// It could not be started (no program, bad working directory).
    SetupError,
    /// Not started: the budget was spent or the user stopped first.
    NotRun,
    /// Its shard was not among those merged.
    Missing,
}

impl TargetState {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            TargetState::Finished => "finished",
            TargetState::Incomplete => "incomplete",
            TargetState::SetupError => "setup error",
            TargetState::NotRun => "not run",
            TargetState::Missing => "missing",
        }
    }
}

/// Compared with the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Fails now, did not before (or was not there).
    New,
    /// Failed before, passes now.
    Fixed,
    /// Failed before and fails now.
    StillFailing,
    /// The verdict changed, yet the program's files and command did not.
    Flaky,
    /// Passed before and passes now.
    Unchanged,
}

impl Change {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Fixed => "fixed",
            Change::StillFailing => "still failing",
            Change::Flaky => "flaky",
            Change::Unchanged => "unchanged",
        }
    }
}

/// Counts of one target's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counts {
    /// Sites of error severity.
    pub errors: u64,
    /// Sites of warning severity.
    pub warnings: u64,
    /// Sites of note severity.
    pub notes: u64,
    /// Sites that fail the gate.
    pub gating: u64,
}

/// One target of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// Its unique name in the sweep file.
    pub name: String,
    /// Its argv.
    pub command: Vec<String>,
    /// Tags from the sweep file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// What the sweep file expects.
    pub expect: Expect,
    /// How far it got.
    pub state: TargetState,
    /// Its run's verdict, when it has a report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::VerdictLabel>,
    /// Its run's exit code under the sweep's policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Whether it came out as the sweep file expects.
    pub as_expected: bool,
    /// How it stands against that expectation, as the judge decided it:
    /// what each format renders (a JUnit failure or error, a colour).
    #[serde(default)]
    pub standing: Standing,
    /// Why, in one line (its first verdict line, or what went wrong).
    pub summary: String,
    /// Its findings.
    pub counts: Counts,
    /// Wall time of its last attempt.
    pub seconds: f64,
    /// The GPU it ran on, as `CUDA_VISIBLE_DEVICES` named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// How many times it was started (more after a resume).
    pub attempts: u32,
    /// Its run directory, relative to the sweep directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_dir: Option<String>,
    /// The shard that ran it.
    pub shard: u32,
    /// A hash of the files its command names (program, script): a changed
    /// verdict with the same checksum and command is flaky.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// Compared with the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
    /// Its run's warnings ("source: message"): its summary may say "see
    /// Warnings", and the sweep's reports are where its reader looks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What its run's clean verdict does not vouch for, as that verdict
    /// said it: the sweep's CLEAN line says it too.
    #[serde(default, skip_serializing_if = "Narrowed::is_empty")]
    pub narrowed: Narrowed,
}

/// How a target's run checked less than a full `cudawatch run` does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Narrowed {
    /// The stages of a full check its run left out (the sweep file's
    /// `stages`, a `--stages` in its `run-args`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<String>,
    /// Its tool stages checked only the program's first steps (by default,
    /// or `--steps`), not the whole program.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_steps: bool,
}

impl Narrowed {
    /// Whether it checked all a full run checks.
    pub fn is_empty(&self) -> bool {
        self.not_run.is_empty() && !self.first_steps
    }
}

impl TargetResult {
    /// Whether the target counts as failing for night-to-night comparison.
    pub fn failing(&self) -> bool {
        !self.as_expected
    }
}

impl SweepReport {
    /// The ids of the sites outside the gate's scope in every target that
    /// has them.
    pub fn out_of_scope_ids(&self) -> Vec<String> {
        self.sites
            .iter()
            .filter(|s| s.out_of_scope)
            .map(|s| s.site.id.clone())
            .collect()
    }
}

/// A site, with the targets it was seen in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSite {
    /// The site as the first target that has it reported it; `count` is
    /// the sum over targets.
    pub site: Site,
    /// The targets it was seen in.
    pub targets: Vec<String>,
    /// The targets whose gate it fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gating_in: Vec<String>,
    /// Outside the gate's scope (library or framework internals) in every
    /// target that has it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub out_of_scope: bool,
    /// New since the baseline, or seen there too (unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
}

/// A site of the baseline that is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixedSite {
    /// Its id.
    pub id: String,
    /// Its message then.
    pub message: String,
    /// The targets it was seen in then.
    pub targets: Vec<String>,
    /// It was outside the gate's scope (library or framework internals):
    /// such sites come and go between runs of the same program (racecheck
    /// does not see every hazard every time), so the reports say so
    /// instead of listing each as fixed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub out_of_scope: bool,
}

/// One line of the history file: one sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// When the merge was made (RFC 3339).
    pub at: String,
    /// The sweep file's id.
    pub sweep_id: String,
    /// The sweep directory (the first shard's).
    pub dir: String,
    /// Wall time of the longest shard.
    pub seconds: f64,
    /// The gate's exit code.
    pub exit_code: i32,
    /// Every target.
    pub targets: Vec<HistoryTarget>,
    /// Sites seen, by id, with the targets that had each.
    #[serde(default)]
    pub sites: Vec<(String, String, Vec<String>)>,
    /// The ids of those sites that were outside the gate's scope in every
    /// target that had them (absent from lines written before it was kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_of_scope: Vec<String>,
}

/// One target in a history line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryTarget {
    /// Its name.
    pub name: String,
    /// How far it got.
    pub state: TargetState,
    /// Its verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::VerdictLabel>,
    /// Whether it came out as expected.
    pub as_expected: bool,
    /// Wall time.
    pub seconds: f64,
    /// Its findings.
    pub counts: Counts,
    /// Its checksum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// Its argv.
    pub command: Vec<String>,
}
