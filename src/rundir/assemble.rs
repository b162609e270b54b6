//! From a run directory's artifacts to a [`Report`], one stage at a time.
//!
//! `cudawatch run` adds each stage as it finishes (nothing is parsed twice)
//! and `cudawatch report DIR` adds them all at once: the same code, so the
//! live report and the saved one cannot disagree.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use cudawatch_model::{
    FindingKind, Outcome, ProcessEnd, Report, StageReport, Tool, ToolSummary, Warning,
};
use cudawatch_parsers::builder::ReportBuilder;

use super::classify;
use super::files;
use super::read_json;
use super::records::{RunRecord, StageRecord};
use crate::errors::ExpectedError;

/// A report being put together from a run directory.
pub struct Assembler {
    dir: PathBuf,
    /// Where source snippets may be read from (see `judge::snippets`).
    source_root: PathBuf,
    run: RunRecord,
    builder: ReportBuilder,
    stages: Vec<StageReport>,
}

/// Builds the report of a run directory from its raw artifacts.
pub fn assemble(dir: &Path, source_root: &Path) -> Result<Report, ExpectedError> {
    let run: RunRecord = read_json(&dir.join("run.json"))?;
    let mut assembler = Assembler::new(dir, run.clone(), source_root);
    for tool in &run.stages {
        let stage_dir = dir.join(tool.name());
        if stage_dir.join("stage.json").exists() {
            assembler.add_stage(*tool)?;
        } else if stage_dir.is_dir() {
            // Started, never recorded: cudawatch was killed while it ran.
            // Its partial output is read; the stage cannot be clean.
            assembler.add_record(&StageRecord::unfinished(*tool));
        }
    }
    Ok(assembler.report())
}

impl Assembler {
    /// An assembler for the run `run` in `dir`.
    pub fn new(dir: &Path, run: RunRecord, source_root: &Path) -> Assembler {
        let mut builder = ReportBuilder::new(env!("CARGO_PKG_VERSION"));
        builder.report_mut().target = run.target.clone();
        Assembler {
            dir: dir.to_path_buf(),
            source_root: source_root.to_path_buf(),
            run,
            builder,
            stages: Vec::new(),
        }
    }

    /// Marks the run as stopped by the user.
    pub fn set_interrupted(&mut self) {
        self.run.interrupted = true;
    }

    /// Reads one finished stage (its `stage.json` and artifacts) into the
    /// report and returns how it was judged.
    pub fn add_stage(&mut self, tool: Tool) -> Result<&StageReport, ExpectedError> {
        let record: StageRecord = read_json(&self.dir.join(tool.name()).join("stage.json"))?;
        Ok(self.add_record(&record))
    }

    /// Reads the artifacts of a stage that just finished with `record`.
    pub fn add_record(&mut self, record: &StageRecord) -> &StageReport {
        for note in &record.notes {
            self.builder.report_mut().warnings.push(Warning {
                source: record.tool.name().into(),
                message: note.clone(),
            });
        }
        let stage_dir = self.dir.join(record.tool.name());
        let stage = read_stage(&mut self.builder, &stage_dir, record.tool, record);
        self.stages.push(stage);
        self.stages.last().expect("just pushed")
    }

    /// The report as it stands. A planned stage not (yet) read was not run:
    /// skipped when the user stopped the run first (the run then exits
    /// 130), otherwise inconclusive, never clean: a run directory left by
    /// a killed cudawatch, or the report of a run still going, has not
    /// checked what that stage checks.
    pub fn report(&self) -> Report {
        let mut report = self.builder.clone().finish();
        let (outcome, reason) = if self.run.interrupted {
            (Outcome::Skipped, "not run: the run was interrupted first")
        } else {
            (
                Outcome::Inconclusive,
                "not run: the run ended before this stage (cudawatch was killed, or it is \
                 still running)",
            )
        };
        let stages: Vec<StageReport> = self
            .run
            .stages
            .iter()
            .map(|tool| {
                self.stages
                    .iter()
                    .find(|s| s.tool == *tool)
                    .cloned()
                    .unwrap_or_else(|| not_run(*tool, outcome, reason))
            })
            .collect();
        if self.run.stages.iter().any(|t| Tool::SANITIZERS.contains(t)) {
            report.warnings.extend(allocator_note(&stages));
        }
        report.stages = stages;
        report.interrupted = self.run.interrupted;
        // What doctor found when the run started (`environment.json`).
        report.environment = read_json(&self.dir.join("environment.json")).ok();
        super::environment::apply(&mut report);
        crate::judge::snippets::attach(&mut report, &self.source_root);
        report
    }
}

/// Folds one stage's artifacts into `builder` and classifies the stage.
fn read_stage(
    builder: &mut ReportBuilder,
    stage_dir: &Path,
    tool: Tool,
    record: &StageRecord,
) -> StageReport {
    let rel = |name: &str| format!("{}/{name}", tool.name());
    // An artifact that is there but cannot be read (too large, not a
    // regular file) is not an empty one: the stage cannot vouch for it.
    let unread = std::cell::RefCell::new(Vec::<String>::new());
    let note = |name: &str, error: std::io::Error| {
        if error.kind() != std::io::ErrorKind::NotFound {
            unread.borrow_mut().push(format!("{} ({error})", rel(name)));
        }
    };
    let read = |name: &str| {
        files::read(&stage_dir.join(name)).unwrap_or_else(|e| {
            note(name, e);
            Vec::new()
        })
    };
    let (outcome, reason, summary) = match tool {
        Tool::Plain => {
            let mut output = read("stderr");
            output.extend(read("stdout"));
            let found = builder.program_output(&rel("stderr"), &output);
            let (o, r) = classify::plain(record, found);
            (o, r, ToolSummary::default())
        }
        Tool::Csan => {
            let mut output = read("stderr");
            output.extend(read("stdout"));
            let races = builder.csan(&rel("stderr"), &output);
            // What the hook saw at the program's exit; absent when it could
            // not run or the program never got to exit.
            let hook: Option<classify::HookFacts> = files::read(&stage_dir.join("hook.json"))
                .ok()
                .and_then(|b| cudawatch_parsers::memory::hook_facts(&b).ok());
            let (o, r) = classify::csan(record, races, hook.as_ref());
            // The program failed under CSAN: when that failure is already a
            // finding (the plain run's assert), the stage is blocked by it,
            // as a sanitizer stage stopped by the same assert is.
            let failed = !matches!(record.end, ProcessEnd::Exited(0) | ProcessEnd::NotStarted);
            let summary = ToolSummary {
                target_failed: failed,
                ..ToolSummary::default()
            };
            (o, r, summary)
        }
        Tool::Memory => {
            let (hook, ooms) = super::memory::hook_artifacts(stage_dir);
            let steps = read("steps.jsonl");
            let stderr = read("stderr");
            let found = hook.is_some() || !ooms.is_empty();
            let memory = found.then(|| {
                let expandable = super::memory::expandable_outcome(stage_dir, record);
                let commands = files::read(&stage_dir.join("processes.json"))
                    .map(|b| cudawatch_parsers::memory::process_commands(&b))
                    .unwrap_or_default();
                builder.memory(
                    &rel("hook.json"),
                    cudawatch_parsers::memory::Artifacts {
                        hook: hook.as_ref().cloned().unwrap_or_default(),
                        ooms: &ooms,
                        steps: &steps,
                        program_output: &String::from_utf8_lossy(&stderr),
                        commands: &commands,
                    },
                    expandable,
                )
            });
            let (o, r) = classify::memory(record, hook.as_ref(), memory.as_ref());
            // The program failed under the hook: the plain run's failure
            // already said so (the csan stage's rule).
            let failed = !matches!(record.end, ProcessEnd::Exited(0) | ProcessEnd::NotStarted);
            let summary = ToolSummary {
                target_failed: failed,
                ..ToolSummary::default()
            };
            (o, r, summary)
        }
        Tool::OomRecovery => {
            let (hook, ooms) = super::memory::hook_artifacts(stage_dir);
            let stderr = String::from_utf8_lossy(&read("stderr")).into_owned();
            let ended_by_oom =
                !matches!(record.end, ProcessEnd::Exited(0) | ProcessEnd::NotStarted)
                    && stderr.contains("OutOfMemoryError");
            let seen = builder.oom_recovery(
                &rel("stderr"),
                &hook.clone().unwrap_or_default(),
                &ooms,
                &stderr,
                ended_by_oom,
            );
            let (o, r) = classify::oom_recovery(record, hook.as_ref(), seen, ended_by_oom);
            (o, r, ToolSummary::default())
        }
        Tool::Ncu => {
            let raw = read("raw.csv");
            let details = read("details.csv");
            let mut log = read("stdout");
            log.extend(read("stderr"));
            let mut names: Vec<String> = std::fs::read_dir(stage_dir)
                .map(|entries| {
                    entries
                        .filter_map(|e| {
                            e.ok().map(|e| e.file_name().to_string_lossy().into_owned())
                        })
                        .filter(|n| n.starts_with("source-") && n.ends_with(".csv"))
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            let sources: Vec<(String, Vec<u8>)> =
                names.iter().map(|name| (rel(name), read(name))).collect();
            let source_refs: Vec<(&str, &[u8])> = sources
                .iter()
                .map(|(n, b)| (n.as_str(), b.as_slice()))
                .collect();
            let (raw_name, details_name, log_name) =
                (rel("raw.csv"), rel("details.csv"), rel("stdout"));
            let before = uncoalesced_sites(builder);
            let evidence = builder.ncu(
                (!raw.is_empty()).then_some((raw_name.as_str(), raw.as_slice())),
                (!details.is_empty()).then_some((details_name.as_str(), details.as_slice())),
                &source_refs,
                Some((log_name.as_str(), log.as_slice())),
            );
            let uncoalesced = uncoalesced_sites(builder) - before;
            // The report file itself may have been left out of a copied
            // run directory (it is large); an imported raw page proves it existed.
            let profile = stage_dir.join("profile.ncu-rep").exists() || !raw.is_empty();
            let (o, r) = classify::ncu(record, &evidence, uncoalesced, profile);
            (o, r, evidence.summary)
        }
        Tool::Memcheck | Tool::Racecheck | Tool::Initcheck | Tool::Synccheck | Tool::Sanitizer => {
            let text = read("stdout");
            let xml_file = format!("{}.xml", tool.name());
            let xml = files::open(&stage_dir.join(&xml_file))
                .map_err(|e| note(&xml_file, e))
                .ok()
                .map(|f| BufReader::with_capacity(1 << 20, f));
            let xml_name = rel(&xml_file);
            let evidence = builder.sanitizer(
                tool,
                xml.map(|r| (xml_name.as_str(), r)),
                Some((rel("stdout").as_str(), text.as_slice())),
            );
            let usage = String::from_utf8_lossy(&text).contains("Usage: compute-sanitizer");
            let plain = stage_dir
                .parent()
                .map(|run| run.join("plain").join("stdout"))
                .and_then(|p| files::read(&p).ok())
                .unwrap_or_default();
            let complete = classify::output_complete(&plain, &text);
            let (o, r) = classify::sanitizer(record, &evidence, usage, complete);
            (o, r, evidence.summary)
        }
    };
    let mut artifacts: Vec<String> = std::fs::read_dir(stage_dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| rel(&e.file_name().to_string_lossy())))
                .collect()
        })
        .unwrap_or_default();
    artifacts.sort();
    let unread = unread.borrow().clone();
    let (outcome, mut reason) = if unread.is_empty() {
        (outcome, reason)
    } else {
        (
            outcome.max(Outcome::Inconclusive),
            format!("could not read {}: not clean; {reason}", unread.join(", ")),
        )
    };
    if record.left_behind {
        reason.push_str("; processes it left behind were killed");
    }
    StageReport {
        tool,
        outcome,
        reason,
        end: Some(record.end),
        seconds: Some(record.seconds),
        command: record.command.clone(),
        env: record.env.clone(),
        summary,
        artifacts,
        gpu_memory_mib: record.gpu_memory_mib,
        stderr_tail: if tool == Tool::Plain && record.end != ProcessEnd::Exited(0) {
            tail(&read("stderr"))
        } else {
            Vec::new()
        },
    }
}

/// Counts the uncoalesced-access sites folded so far; the builder is the
/// one place sites live, so the ncu stage's share is a difference.
fn uncoalesced_sites(builder: &ReportBuilder) -> usize {
    builder
        .sites()
        .iter()
        .filter(|s| s.kind == FindingKind::UncoalescedAccess)
        .count()
}

fn allocator_note(stages: &[StageReport]) -> Option<Warning> {
    stages
        .iter()
        .find(|s| {
            // Only where a sanitizer really ran: otherwise it changed nothing.
            s.end.is_some_and(|e| e != ProcessEnd::NotStarted)
                && s.env
                    .iter()
                    .any(|e| e == "PYTORCH_NO_CUDA_MEMORY_CACHING=1")
        })
        .map(|_| Warning {
            source: "sanitizers".into(),
            message: "PyTorch's caching allocator was turned off under the sanitizers \
                      (PYTORCH_NO_CUDA_MEMORY_CACHING=1): it hides out-of-bounds accesses \
                      inside its blocks"
                .into(),
        })
}

fn not_run(tool: Tool, outcome: Outcome, reason: &str) -> StageReport {
    StageReport {
        tool,
        outcome,
        reason: reason.to_string(),
        end: None,
        seconds: None,
        command: Vec::new(),
        env: Vec::new(),
        summary: ToolSummary::default(),
        artifacts: Vec::new(),
        gpu_memory_mib: None,
        stderr_tail: Vec::new(),
    }
}

/// Lines kept of a failed program's stderr, and the longest shown whole.
const TAIL_LINES: usize = 12;
const TAIL_CHARS: usize = 300;

/// The last non-empty lines of `bytes`, each cut to a readable length.
fn tail(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|l| l.chars().take(TAIL_CHARS).collect())
        .collect()
}
