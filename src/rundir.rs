//! The run directory: every raw artifact, one `stage.json` per stage, and
//! `report.json`. A report is always assembled from this directory, during
//! `cudawatch run` after each stage and later by `cudawatch report`, so the
//! saved run and the live one can never disagree.
//!
//! ```text
//! <run>/run.json                  target, planned stages, cudawatch version
//! <run>/plain/{stage.json,stdout,stderr}
//! <run>/memcheck/{stage.json,stdout,stderr,memcheck.xml}   (likewise racecheck, initcheck, synccheck)
//! <run>/ncu/{stage.json,stdout,stderr,profile.ncu-rep,raw.csv,details.csv,source-N.csv}
//! <run>/report.json
//! ```

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::model::{
    FindingKind, Outcome, ProcessEnd, Report, StageReport, Tool, ToolSummary,
};
use serde::{Deserialize, Serialize};

use crate::classify;
use crate::errors::ExpectedError;

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
}

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
    /// Peak and total GPU memory in MiB (plain stage).
    #[serde(default)]
    pub gpu_memory_mib: Option<(u64, u64)>,
}

/// Reads a JSON file of the run directory.
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, ExpectedError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExpectedError::RunDir {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| ExpectedError::RunDir {
        path: path.display().to_string(),
        message: format!("not a cudawatch record: {e}"),
    })
}

/// Writes a JSON file of the run directory.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), ExpectedError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| ExpectedError::Write {
        target: path.display().to_string(),
        message: e.to_string(),
    })?;
    std::fs::write(path, text + "\n").map_err(|e| ExpectedError::Write {
        target: path.display().to_string(),
        message: e.to_string(),
    })
}

/// Builds the report of a run directory from its raw artifacts.
pub fn assemble(dir: &Path) -> Result<Report, ExpectedError> {
    let run: RunRecord = read_json(&dir.join("run.json"))?;
    let mut builder = ReportBuilder::new(env!("CARGO_PKG_VERSION"));
    builder.report_mut().target = run.target.clone();
    let mut stages = Vec::new();
    for tool in &run.stages {
        let stage_dir = dir.join(tool.name());
        let record_path = stage_dir.join("stage.json");
        if !record_path.exists() {
            let reason = if run.interrupted {
                "not run: the run was interrupted first"
            } else {
                "not run"
            };
            stages.push(skipped(*tool, reason));
            continue;
        }
        let record: StageRecord = read_json(&record_path)?;
        let read = |name: &str| std::fs::read(stage_dir.join(name)).unwrap_or_default();
        let rel = |name: &str| format!("{}/{name}", tool.name());
        let (outcome, reason, summary) = match tool {
            Tool::Plain => {
                let mut output = read("stderr");
                output.extend(read("stdout"));
                let found = builder.program_output(&rel("stderr"), &output);
                let (o, r) = classify::plain(&record, found);
                (o, r, ToolSummary::default())
            }
            Tool::Ncu => {
                let raw = read("raw.csv");
                let details = read("details.csv");
                let mut log = read("stdout");
                log.extend(read("stderr"));
                let mut sources: Vec<(String, Vec<u8>)> = Vec::new();
                if let Ok(entries) = std::fs::read_dir(&stage_dir) {
                    let mut names: Vec<String> = entries
                        .filter_map(|e| {
                            e.ok().map(|e| e.file_name().to_string_lossy().into_owned())
                        })
                        .filter(|n| n.starts_with("source-") && n.ends_with(".csv"))
                        .collect();
                    names.sort();
                    for name in names {
                        sources.push((rel(&name), read(&name)));
                    }
                }
                let source_refs: Vec<(&str, &[u8])> = sources
                    .iter()
                    .map(|(n, b)| (n.as_str(), b.as_slice()))
                    .collect();
                let raw_name = rel("raw.csv");
                let details_name = rel("details.csv");
                let log_name = rel("stdout");
                let before = builder_uncoalesced(&builder);
                let evidence = builder.ncu(
                    (!raw.is_empty()).then_some((raw_name.as_str(), raw.as_slice())),
                    (!details.is_empty()).then_some((details_name.as_str(), details.as_slice())),
                    &source_refs,
                    Some((log_name.as_str(), log.as_slice())),
                );
                let uncoalesced = builder_uncoalesced(&builder) - before;
                // The report file itself may have been left out of a copied
                // run directory (it is large); an imported raw page proves it existed.
                let profile = stage_dir.join("profile.ncu-rep").exists() || !raw.is_empty();
                let (o, r) = classify::ncu(&record, &evidence, uncoalesced, profile);
                (o, r, evidence.summary)
            }
            _ => {
                let text = read("stdout");
                let xml_path = stage_dir.join(format!("{}.xml", tool.name()));
                let xml = File::open(&xml_path)
                    .ok()
                    .map(|f| BufReader::with_capacity(1 << 20, f));
                let xml_name = rel(&format!("{}.xml", tool.name()));
                let evidence = builder.sanitizer(
                    *tool,
                    xml.map(|r| (xml_name.as_str(), r)),
                    Some((rel("stdout").as_str(), text.as_slice())),
                );
                let usage = String::from_utf8_lossy(&text).contains("Usage: compute-sanitizer");
                let (o, r) = classify::sanitizer(&record, &evidence, usage);
                (o, r, evidence.summary)
            }
        };
        let mut artifacts: Vec<String> = std::fs::read_dir(&stage_dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| rel(&e.file_name().to_string_lossy())))
                    .collect()
            })
            .unwrap_or_default();
        artifacts.sort();
        let mut reason = reason;
        if record.left_behind {
            reason.push_str("; processes it left behind were killed");
        }
        stages.push(StageReport {
            tool: *tool,
            outcome,
            reason,
            end: Some(record.end),
            seconds: Some(record.seconds),
            command: record.command.clone(),
            env: record.env.clone(),
            summary,
            artifacts,
            gpu_memory_mib: record.gpu_memory_mib,
        });
    }
    let mut report = builder.finish();
    if run
        .stages
        .iter()
        .any(|t| *t != Tool::Plain && *t != Tool::Ncu)
    {
        report.warnings.extend(allocator_note(&stages));
    }
    report.stages = stages;
    report.interrupted = run.interrupted;
    crate::sources::attach(&mut report);
    Ok(report)
}

/// Counts the uncoalesced-access sites folded so far; the builder is the
/// one place sites live, so the ncu stage's share is a difference.
fn builder_uncoalesced(builder: &ReportBuilder) -> usize {
    builder
        .sites()
        .iter()
        .filter(|s| s.kind == FindingKind::UncoalescedAccess)
        .count()
}

fn allocator_note(stages: &[StageReport]) -> Option<cudawatch_parsers::model::Warning> {
    stages.iter().find(|s| s.env.iter().any(|e| e == "PYTORCH_NO_CUDA_MEMORY_CACHING=1")).map(|_| {
        cudawatch_parsers::model::Warning {
            source: "sanitizers".into(),
            message: "PyTorch's caching allocator was turned off under the sanitizers (PYTORCH_NO_CUDA_MEMORY_CACHING=1): \
                      it hides out-of-bounds accesses inside its blocks"
                .into(),
        }
    })
}

fn skipped(tool: Tool, reason: &str) -> StageReport {
    StageReport {
        tool,
        outcome: Outcome::Skipped,
        reason: reason.to_string(),
        end: None,
        seconds: None,
        command: Vec::new(),
        env: Vec::new(),
        summary: ToolSummary::default(),
        artifacts: Vec::new(),
        gpu_memory_mib: None,
    }
}
