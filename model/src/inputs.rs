//! What went into a report: the files read, the summary lines a tool
//! printed, and warnings that limit trust.

use serde::{Deserialize, Serialize};

use crate::Tool;

/// The summary lines a tool printed: the numbers the XML does not carry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSummary {
    /// `ERROR SUMMARY: N errors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    /// `N errors were not printed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_printed: Option<u64>,
    /// `N errors were skipped (error buffer overflow).`: errors the tool
    /// counted but kept no record of (without call stacks it keeps the
    /// first 256 records of each launch). Not in `errors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
    /// `LEAK SUMMARY: B bytes leaked in K allocations`: (B, K).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaked: Option<(u64, u64)>,
    /// `RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)`: (H, E, W).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub racecheck: Option<(u64, u64, u64)>,
    /// Tool lines that say the check did not really happen, verbatim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// `Target application returned an error`.
    #[serde(default)]
    pub target_failed: bool,
    /// ncu printed `No kernels were profiled`.
    #[serde(default)]
    pub no_kernels_profiled: bool,
    /// ncu attached to the program (`==PROF== Connected to process`): its
    /// injection worked, so "no kernels profiled" then means none launched
    /// (or none matched a filter).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attached: bool,
    /// Kernels ncu listed under "Available Kernels:" after profiling none:
    /// the program did launch them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub available_kernels: Vec<String>,
    /// The kernels ncu said it was profiling (`==PROF== Profiling
    /// "name" - N`), as it shortens them (`nvjet_sm90_tst_64x8_64x16_2x4...`):
    /// what the program launched, also when ncu was stopped before any page.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiled_kernels: Vec<String>,
    /// Kernel launches ncu said it profiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels_profiled: Option<u64>,
    /// Records the text ended in the middle of (a killed run, a cut log):
    /// not findings, and a reason the run is incomplete.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut_records: u64,
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ToolSummary {
    /// Whether any summary line was seen at all: a sanitizer run that
    /// printed none did not finish.
    pub fn has_closing_line(&self) -> bool {
        self.errors.is_some() || self.racecheck.is_some()
    }

    /// Adds `other`'s totals to these (the ranks of one stage, each under
    /// its own compute-sanitizer): counts summed where either has them,
    /// failures listed, a failed target kept.
    pub fn add(&mut self, other: &ToolSummary) {
        fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x + y),
                (x, y) => x.or(y),
            }
        }
        self.errors = sum(self.errors, other.errors);
        self.not_printed = sum(self.not_printed, other.not_printed);
        self.skipped = sum(self.skipped, other.skipped);
        self.racecheck = match (self.racecheck, other.racecheck) {
            (Some((a, b, c)), Some((x, y, z))) => Some((a + x, b + y, c + z)),
            (x, y) => x.or(y),
        };
        self.leaked = match (self.leaked, other.leaked) {
            (Some((a, b)), Some((x, y))) => Some((a + x, b + y)),
            (x, y) => x.or(y),
        };
        self.failures.extend(other.failures.iter().cloned());
        self.target_failed |= other.target_failed;
    }
}

/// One input that went into the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Path as given.
    pub path: String,
    /// What cudawatch took it for.
    pub kind: InputKind,
    /// The tool it belongs to.
    pub tool: Tool,
    /// Records or rows read from it.
    pub records: u64,
    /// The totals the tool printed in it (`ERROR SUMMARY`, `LEAK SUMMARY`,
    /// racecheck's counts), beside the records read: they differ when a
    /// print limit cut the records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ToolSummary>,
}

/// The kinds of file cudawatch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// compute-sanitizer `--xml --save` output.
    SanitizerXml,
    /// compute-sanitizer text output (stdout or `--log-file`).
    SanitizerText,
    /// `ncu --import --csv --page raw`.
    NcuRaw,
    /// `ncu --import --csv --page details`.
    NcuDetails,
    /// `ncu --import --csv --page source --print-source cuda,sass`.
    NcuSource,
    /// ncu's own console output (`==PROF==` lines).
    NcuLog,
    /// `ncu --import --page details --print-details all` as text: each
    /// launch's host call stacks (profiled with `--call-stack`).
    NcuStacks,
    /// A program's stderr or stdout.
    ProgramOutput,
    /// cudawatch's global-race tool's lines (`global-race.jsonl`).
    GlobalRace,
}

/// Something that limits what the report can be trusted for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// The file or stage it is about.
    pub source: String,
    /// One line a user can act on.
    pub message: String,
}

impl Warning {
    /// `warnings` as a reader should see them: the same message from
    /// several sources said once, its sources joined ("memcheck,
    /// racecheck: ..."), in the order they first came. Stages that ran
    /// again for the same reason write the same words.
    pub fn grouped(warnings: &[Warning]) -> Vec<Warning> {
        let mut grouped: Vec<Warning> = Vec::new();
        for w in warnings {
            match grouped.iter_mut().find(|g| g.message == w.message) {
                Some(g) => {
                    if !g.source.split(", ").any(|s| s == w.source) {
                        g.source.push_str(", ");
                        g.source.push_str(&w.source);
                    }
                }
                None => grouped.push(w.clone()),
            }
        }
        grouped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warning(source: &str, message: &str) -> Warning {
        Warning {
            source: source.into(),
            message: message.into(),
        }
    }

    #[test]
    fn the_same_warning_of_several_stages_is_said_once_with_all_of_them() {
        let warnings = [
            warning("memcheck", "graphs failed: run again"),
            warning("initcheck", "graphs failed: allocator on"),
            warning("racecheck", "graphs failed: run again"),
            warning("racecheck", "graphs failed: run again"),
        ];
        assert_eq!(
            Warning::grouped(&warnings),
            [
                warning("memcheck, racecheck", "graphs failed: run again"),
                warning("initcheck", "graphs failed: allocator on"),
            ]
        );
    }
}
