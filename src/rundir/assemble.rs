//! From a run directory's artifacts to a [`Report`], one stage at a time.
//!
//! `cudawatch run` adds each stage as it finishes (nothing is parsed twice)
//! and `cudawatch report DIR` adds them all at once: the same code, so the
//! live report and the saved one cannot disagree.

use std::path::{Path, PathBuf};

use cudawatch_model::{Outcome, ProcessEnd, Report, StageReport, Tool, ToolSummary, Warning};
use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::memory::HookFacts;

use super::read_json;
use super::records::RunRecord;
use crate::errors::ExpectedError;
use crate::judge::notes::NcuLeftOut;
use crate::tools::{StageFiles, StageJudged, StageRecord, env_value};

/// A report being put together from a run directory.
pub struct Assembler {
    dir: PathBuf,
    /// Where source snippets may be read from (see `crate::rundir::snippets`).
    source_root: PathBuf,
    run: RunRecord,
    builder: ReportBuilder,
    stages: Vec<StageReport>,
    /// What the stages' Python hooks saw the program do.
    hooks_saw: HooksSaw,
}

/// What the stages' Python hooks (`hook.json`) saw, over the stages read
/// so far: the framework notes concern only programs that use the
/// framework, and `--steps`' note what the program really did.
#[derive(Debug, Clone, Copy, Default)]
struct HooksSaw {
    /// A stage's hook reported.
    reported: bool,
    torch: bool,
    jax: bool,
    /// A stage's hook ended the program (`--steps`).
    stopped: bool,
}

/// Builds the report of a run directory from its raw artifacts.
pub fn assemble(dir: &Path, source_root: &Path) -> Result<Report, ExpectedError> {
    let run: RunRecord = read_json(&dir.join("run.json"))?;
    let mut assembler = Assembler::new(dir, run.clone(), source_root);
    for tool in &run.stages {
        let stage_dir = dir.join(tool.name());
        if let Some(why) = refused_folder(&stage_dir, *tool) {
            // Never read through: what it points at is another run's.
            assembler.add_refused(*tool, &why);
        } else if stage_dir.join("stage.json").exists() {
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
        builder.report_mut().own_kernels = run.own_kernels.clone();
        if run.own_kernel_search_cut_short {
            builder.report_mut().warnings.push(Warning {
                source: "racecheck, synccheck, ncu".into(),
                message: crate::tools::sanitizer::own_kernel_search_cut_short(),
            });
        }
        Assembler {
            dir: dir.to_path_buf(),
            source_root: source_root.to_path_buf(),
            run,
            builder,
            stages: Vec::new(),
            hooks_saw: HooksSaw::default(),
        }
    }

    /// Marks the run as stopped by the user.
    pub fn set_interrupted(&mut self) {
        self.run.interrupted = true;
    }

    /// A stage whose folder is not read (`refused_folder`): inconclusive,
    /// saying why.
    pub fn add_refused(&mut self, tool: Tool, why: &str) {
        self.stages.push(not_run(
            tool,
            Outcome::Inconclusive,
            &format!("not read: {why}"),
        ));
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
        let (mut stage, hook) = read_stage(&mut self.builder, &stage_dir, record.tool, record);
        earlier_tries(&mut self.builder, &self.dir, record, &mut stage);
        if let Some(hook) = hook {
            self.hooks_saw.reported = true;
            self.hooks_saw.torch |= hook.torch_imported;
            self.hooks_saw.jax |= hook.jax_imported;
            self.hooks_saw.stopped |=
                hook.stopped_after_steps.is_some() || hook.stopped_after_calls.is_some();
        }
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
        // A program whose hooks reported and never imported torch (JAX,
        // CuPy) had no caching allocator to turn off.
        let torch_possible = self.hooks_saw.torch || !self.hooks_saw.reported;
        if torch_possible && self.run.stages.iter().any(|t| Tool::SANITIZERS.contains(t)) {
            report.notes.extend(allocator_note(&stages));
        }
        if self.hooks_saw.jax {
            report.notes.extend(xla_note(&stages));
        }
        report.notes.extend(steps_note(&stages, self.hooks_saw));
        report.notes.extend(first_block_note(&stages));
        report.notes.extend(left_out_note(&stages));
        report.notes.extend(racecheck_libraries_note(&stages));
        report.notes.extend(launcher_notes(&stages));
        report.stages = stages;
        report.interrupted = self.run.interrupted;
        // What doctor found when the run started (`environment.json`).
        report.environment = read_json(&self.dir.join("environment.json")).ok();
        super::environment::apply(&mut report);
        let made_in = self.run.source_root.as_deref().map(Path::new);
        crate::rundir::attach_sources(&mut report, &self.source_root, made_in);
        report
    }
}

/// Folds one stage's artifacts into `builder` and judges the stage, by
/// its kind (`tools::kind`).
/// Also returns what cudawatch's Python hook said in the stage's folder.
fn read_stage(
    builder: &mut ReportBuilder,
    stage_dir: &Path,
    tool: Tool,
    record: &StageRecord,
) -> (StageReport, Option<HookFacts>) {
    let files = StageFiles::new(stage_dir, tool);
    let StageJudged {
        outcome,
        reason,
        summary,
    } = crate::tools::kind(tool).read(builder, &files, record);
    let rel = |name: &str| files.rel(name);
    let mut artifacts: Vec<String> = std::fs::read_dir(stage_dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| rel(&e.file_name().to_string_lossy())))
                .collect()
        })
        .unwrap_or_default();
    artifacts.sort();
    let unread = files.unread();
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
    let read_hook = hook_facts(&files);
    let hook = read_hook.clone().unwrap_or_default();
    let covered = steps_covered(&hook, &record.env);
    if let Some(covered) = &covered {
        reason.push_str(&format!("; {}", steps_reason(covered)));
    }
    if hook.cudnn_benchmark_refused > 0 {
        let notes = &mut builder.report_mut().notes;
        let note = crate::judge::notes::cudnn_benchmark_off();
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    let stage = StageReport {
        tool,
        outcome,
        reason,
        end: Some(record.end),
        seconds: Some(record.seconds),
        command: record.command.clone(),
        env: record.env.clone(),
        unchecked_launches: if Tool::SANITIZERS.contains(&tool) {
            crate::tools::sanitizer::unchecked_before(&record.command)
        } else {
            Vec::new()
        },
        covered,
        summary,
        artifacts,
        gpu_memory_mib: record.gpu_memory_mib,
        blocked_by: None,
        attempts: Vec::new(),
        stderr_tail: if tool == Tool::Plain && record.end != ProcessEnd::Exited(0) {
            tail(&files.read_program("stderr"))
        } else {
            Vec::new()
        },
    };
    (stage, read_hook)
}

/// The steps the stage ran before its hook ended the program, and who
/// chose them (the stage kind's default, or `--steps`).
fn steps_covered(
    hook: &cudawatch_parsers::memory::HookFacts,
    env: &[String],
) -> Option<cudawatch_model::StepsCovered> {
    use cudawatch_model::{StepUnit, StepsCovered};
    let (count, unit) = match (hook.stopped_after_steps, hook.stopped_after_calls) {
        (Some(n), _) => (n, StepUnit::OptimizerSteps),
        (None, Some(n)) => (n, StepUnit::ModelCalls),
        (None, None) => return None,
    };
    Some(StepsCovered {
        count,
        unit,
        by_default: env_value(env, crate::tools::hook::STEPS_BY_DEFAULT).is_some(),
        optimizers: hook.stopped_optimizers.unwrap_or(1),
        optimizers_behind: hook.optimizers_behind.unwrap_or(0),
    })
}

/// `the program was ended after its first 2 optimizer steps (this stage's
/// default for a training loop; --whole-program runs every step)`.
fn steps_reason(covered: &cudawatch_model::StepsCovered) -> String {
    let which = if covered.unit == cudawatch_model::StepUnit::ModelCalls {
        "the program, which builds no optimizer, was ended after"
    } else {
        "the program was ended after"
    };
    let why = if covered.by_default {
        "this stage's default for a loop; --whole-program runs every step"
    } else {
        "--steps"
    };
    format!("{which} {} ({why})", covered.words())
}

/// The stage's earlier tries (`StageRecord::earlier_tries`) as data in its
/// report, and the findings of those whose findings stand (a tool that died
/// after printing them, a flood stopped) judged with the stage's: a clean
/// rerun never erases what a crashed try saw. Each try's folder is read by
/// the stage's own kind, as the stage's is, into a report of its own; the
/// sites the reported try did not see are added, marked as seen only
/// there, and the stage is then not clean.
fn earlier_tries(
    builder: &mut ReportBuilder,
    run_dir: &Path,
    record: &StageRecord,
    stage: &mut StageReport,
) {
    for earlier in &record.earlier_tries {
        let mut attempt = cudawatch_model::Attempt {
            reason: earlier.reason.clone(),
            folder: earlier.folder.clone(),
            judged: earlier.judged,
            sites_only_here: 0,
        };
        // Only a folder of the run's own, one level of its own names: the
        // record is read back from disk and may be anyone's.
        let safe = earlier
            .folder
            .split('/')
            .all(|part| !part.is_empty() && part != ".." && part != ".");
        let kept = safe && !earlier.folder.is_empty() && {
            let path = run_dir.join(&earlier.folder);
            std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
        };
        if earlier.judged && !kept {
            // What that try saw stands, and is not here to be read.
            stage.outcome = stage.outcome.max(Outcome::Inconclusive);
            stage.reason = format!(
                "its earlier try ({}) is not in the run directory ({}), so what it saw is \
                 unknown; {}",
                earlier.reason,
                if earlier.folder.is_empty() {
                    "it could not be kept".to_string()
                } else {
                    format!("{} is missing", earlier.folder)
                },
                stage.reason
            );
        }
        if earlier.judged && kept {
            let files = StageFiles::earlier_try(run_dir, &earlier.folder);
            let mut scratch = ReportBuilder::new(env!("CARGO_PKG_VERSION"));
            let placeholder = StageRecord::unfinished(record.tool);
            crate::tools::kind(record.tool).read(&mut scratch, &files, &placeholder);
            let only_in = format!("the try kept in {} ({})", earlier.folder, earlier.reason);
            attempt.sites_only_here =
                builder.earlier_try_sites(scratch.finish().findings, &only_in);
            // Kept, but what it saw cannot be read: as unknown as a try
            // that was not kept.
            let unread = files.unread();
            if !unread.is_empty() {
                stage.outcome = stage.outcome.max(Outcome::Inconclusive);
                stage.reason = format!(
                    "what its earlier try ({}) saw could not be read ({}); {}",
                    earlier.reason,
                    unread.join(", "),
                    stage.reason
                );
            }
        }
        stage.attempts.push(attempt);
    }
    let only_earlier: u64 = stage.attempts.iter().map(|a| a.sites_only_here).sum();
    if only_earlier > 0 && stage.outcome < Outcome::Findings {
        stage.outcome = Outcome::Findings;
        stage.reason = format!(
            "{} seen only in an earlier try (its rerun did not see {}); the rerun: {}",
            crate::words::plural(only_earlier, "site"),
            if only_earlier == 1 { "it" } else { "them" },
            stage.reason
        );
    }
}

fn allocator_note(stages: &[StageReport]) -> Option<Warning> {
    stages
        .iter()
        .find(|s| {
            // Only where a sanitizer really ran: otherwise it changed nothing.
            really_ran(s)
                && env_value(&s.env, crate::tools::sanitizer::ALLOCATOR_OFF_VARIABLE) == Some("1")
        })
        .map(|_| Warning {
            source: crate::judge::notes::ALLOCATOR_OFF_SOURCE.into(),
            message: crate::judge::notes::ALLOCATOR_OFF.into(),
        })
}

/// racecheck told to analyse block (cluster) 0 of each launch only
/// (`--racecheck-blocks first`): a CLEAN verdict must say what it covered.
fn first_block_note(stages: &[StageReport]) -> Option<Warning> {
    let option = crate::tools::sanitizer::FIRST_BLOCK_OPTION;
    stages
        .iter()
        .find(|s| {
            s.tool == Tool::Racecheck
                && matches!(s.outcome, Outcome::Clean | Outcome::Findings)
                && s.command.windows(2).any(|w| w[0] == option && w[1] == "0")
        })
        .map(|_| Warning {
            source: "racecheck".into(),
            message: format!(
                "racecheck analysed block (cluster) 0 of each launch only ({option} 0, \
                 --racecheck-blocks first): a race that shows only in other blocks was not seen"
            ),
        })
}

/// The kernels the stages that ran left out by name (racecheck's and
/// synccheck's library filter, ncu's of PyTorch's and the libraries'
/// kernels), said once
/// where the stage table's cells are cut: what was not analysed never
/// reads as checked.
fn left_out_note(stages: &[StageReport]) -> Option<Warning> {
    let ran = |s: &&StageReport| matches!(s.outcome, Outcome::Clean | Outcome::Findings);
    let sanitizers: Vec<Tool> = stages
        .iter()
        .filter(ran)
        .filter(|s| crate::tools::sanitizer::leaves_out_libraries_in(&s.command))
        .map(|s| s.tool)
        .collect();
    let ncu = stages
        .iter()
        .filter(ran)
        .find(|s| s.tool == Tool::Ncu)
        .map_or(NcuLeftOut::Nothing, |s| {
            crate::tools::ncu::left_out_by_name(&s.command)
        });
    crate::judge::notes::left_out_by_name(&sanitizers, ncu)
}

/// Racecheck analysed a Python program's library kernels too, for long:
/// what `--racecheck-sanitizer` would save (tools::sanitizer::launches's
/// LIBRARY_FILTER_SINCE).
fn racecheck_libraries_note(stages: &[StageReport]) -> Option<Warning> {
    let stage = stages.iter().find(|s| {
        s.tool == Tool::Racecheck
            && matches!(s.outcome, Outcome::Clean | Outcome::Findings)
            && env_value(&s.env, "CUDAWATCH_HOOK_OUT").is_some()
            && !s.command.iter().any(|a| a.starts_with("--kernel-name"))
            && s.seconds.is_some_and(|t| t >= RACECHECK_LONG_SECONDS)
    })?;
    Some(Warning {
        source: "racecheck".into(),
        message: format!(
            "racecheck took {:.0} s analysing every kernel, cuDNN's and cuBLAS's too, whose \
             races never gate: this compute-sanitizer crashes the program when they are left \
             out, 2026.4 does not: pip install nvidia-cuda-sanitizer-api in the program's \
             Python and racecheck runs under it (a ResNet-18 training step took 15 s instead \
             of 117 s on an H200)",
            stage.seconds.unwrap_or_default()
        ),
    })
}

/// How long racecheck must have taken before its note says what a newer
/// compute-sanitizer would save.
const RACECHECK_LONG_SECONDS: f64 = 30.0;

/// What cudawatch's hook said in the stage's folder (`hook.json`), in a
/// stage that had it: where `--steps` ended the program, whether cuDNN's
/// benchmark mode was kept off.
fn hook_facts(files: &StageFiles) -> Option<HookFacts> {
    let bytes = crate::safe_files::read(&files.path("hook.json")).ok()?;
    cudawatch_parsers::memory::hook_facts(&bytes).ok()
}

/// What XLA's settings under the tools changed, said once for a JAX
/// program from the stages that really ran with them.
fn xla_note(stages: &[StageReport]) -> Option<Warning> {
    stages
        .iter()
        .any(|s| really_ran(s) && crate::tools::xla::autotune_was_off(&s.env))
        .then(crate::judge::notes::xla_under_tools)
}

/// What `--steps` left out, said once for the run from the stages that
/// really ran with it and what their hooks saw: where no hook ended the
/// program though hooks reported, every stage ran it whole.
fn steps_note(stages: &[StageReport], seen_by_hooks: HooksSaw) -> Option<Warning> {
    use crate::judge::notes::{StepsSeen, first_steps, steps};
    let ran: Vec<&StageReport> = stages.iter().filter(|s| really_ran(s)).collect();
    // The tool stages' own first steps: said where a hook ended the program
    // (a program without a loop ran whole everywhere, as it always did).
    if ran
        .iter()
        .any(|s| env_value(&s.env, crate::tools::hook::STEPS_BY_DEFAULT).is_some())
    {
        let covered: Vec<(Tool, cudawatch_model::StepsCovered)> = ran
            .iter()
            .filter_map(|s| s.covered.filter(|c| c.by_default).map(|c| (s.tool, c)))
            .collect();
        return first_steps(&covered);
    }
    let asked = ran
        .iter()
        .find_map(|s| env_value(&s.env, crate::tools::hook::STOP_AFTER_STEPS))?;
    let seen = if seen_by_hooks.stopped || !seen_by_hooks.reported {
        StepsSeen::Ended
    } else if !seen_by_hooks.torch {
        StepsSeen::NoTorch
    } else {
        StepsSeen::TooFew
    };
    Some(steps(asked, seen))
}

/// What a launcher of several processes changed in the stages that
/// really ran (`plan::for_several_processes`).
fn launcher_notes(stages: &[StageReport]) -> Vec<Warning> {
    let ran = |s: &&StageReport| really_ran(s);
    let Some(launcher) = stages
        .iter()
        .filter(ran)
        .find_map(|s| env_value(&s.env, crate::tools::plain::LAUNCHER_VAR))
    else {
        return Vec::new();
    };
    let script = crate::tools::sanitizer::per_rank::SCRIPT;
    let per_rank =
        |s: &StageReport| env_value(&s.env, "PYTHON_EXEC").is_some_and(|v| v.ends_with(script));
    let sanitizers = || {
        stages
            .iter()
            .filter(ran)
            .filter(|s| Tool::SANITIZERS.contains(&s.tool))
    };
    let changes = crate::judge::notes::LauncherChanges {
        plain_ran: stages.iter().filter(ran).any(|s| s.tool == Tool::Plain),
        ncu_left_out_nccl: stages
            .iter()
            .filter(ran)
            .any(|s| s.tool == Tool::Ncu && crate::tools::ncu::leaves_out_nccl(&s.command)),
        per_rank: sanitizers()
            .filter(|s| per_rank(s))
            .map(|s| s.tool.name())
            .collect(),
        around_launcher: sanitizers()
            .filter(|s| !per_rank(s))
            .map(|s| s.tool.name())
            .collect(),
    };
    crate::judge::notes::several_processes(launcher, changes)
}

/// Whether a stage's process started: only then did its settings change
/// anything the notes could speak of.
fn really_ran(stage: &StageReport) -> bool {
    stage.end.is_some_and(|e| e != ProcessEnd::NotStarted)
}

/// Why a stage folder of a run directory from anyone is not read: a
/// symbolic link (another run's clean folder would vouch for this one), or
/// a `stage.json` that says it is another stage's.
fn refused_folder(stage_dir: &Path, tool: Tool) -> Option<String> {
    let meta = std::fs::symlink_metadata(stage_dir).ok()?;
    if meta.file_type().is_symlink() {
        return Some(format!(
            "{}/ is a symbolic link, and a run directory is read only from its own folders",
            tool.name()
        ));
    }
    let record: StageRecord = read_json(&stage_dir.join("stage.json")).ok()?;
    (record.tool != tool).then(|| {
        format!(
            "{}/stage.json is the record of a {} stage",
            tool.name(),
            record.tool.name()
        )
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
        unchecked_launches: Vec::new(),
        covered: None,
        summary: ToolSummary::default(),
        artifacts: Vec::new(),
        gpu_memory_mib: None,
        blocked_by: None,
        attempts: Vec::new(),
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
