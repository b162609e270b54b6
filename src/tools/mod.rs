//! The catalogue of stage kinds. Each kind of stage (the plain run, a
//! compute-sanitizer tool, ncu, CSAN, the memory hook, the OOM-recovery
//! test) is one module here that owns its whole story:
//!
//! - its command line and environment ([`StageKind::command`]), and doctor's
//!   probe of its tool where it has one (`sanitizer::probe_argv`, `ncu::probe_argv`);
//! - the commands it needs after the stage ([`StageKind::follow_ups`]: ncu's
//!   CSV imports, the memory stage's rerun), which the supervisor runs;
//! - how its artifacts are read into the report and how the stage is
//!   judged ([`StageKind::read`], with its rules in the module).
//!
//! [`kind`] maps each [`Tool`] to its module: the one `match` a new kind
//! must join, and the compiler says so. Nothing here starts a process or
//! writes a file, except `after_stage` notes the memory stage keeps.

pub mod coredump;
pub mod csan;
pub mod cuda_graphs;
pub mod global_race;
pub mod hook;
pub mod library_kernels;
pub mod lookup;
pub mod memory;
pub mod ncu;
pub mod oom_recovery;
pub mod outcome;
pub mod plain;
pub mod procs;
mod ranks;
pub mod record;
pub mod retry;
#[cfg(test)]
mod rules_tests;
pub mod sanitizer;
mod stage_files;
pub mod starved;
pub mod xla;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cudawatch_model::{Outcome, Tool, ToolSummary};
use cudawatch_parsers::builder::ReportBuilder;

pub use lookup::ToolPaths;
pub use record::{EarlierTry, GpuProcess, OtherProcess, Ranks, StageRecord, env_value};
pub use stage_files::StageFiles;

/// The module of `tool`'s kind. No `_ =>`: a new [`Tool`] does not build
/// until it has a kind.
pub fn kind(tool: Tool) -> &'static dyn StageKind {
    match tool {
        Tool::Plain => &plain::Plain,
        Tool::Memcheck | Tool::Racecheck | Tool::Initcheck | Tool::Synccheck | Tool::Sanitizer => {
            &sanitizer::Sanitizer
        }
        Tool::Ncu => &ncu::Ncu,
        Tool::Csan => &csan::Csan,
        Tool::Memory => &memory::Memory,
        Tool::OomRecovery => &oom_recovery::OomRecovery,
        Tool::Coredump => &coredump::Coredump,
        Tool::GlobalRace => &global_race::GlobalRace,
    }
}

/// `peak` MiB times `factor`, plus `fixed` MiB: a stage's GPU memory need
/// (`StageKind::gpu_need_mib`).
pub fn with_margin(peak: u64, factor: f64, fixed: u64) -> u64 {
    (peak as f64 * factor) as u64 + fixed
}

/// One kind of stage.
pub trait StageKind: Sync {
    /// The stage's process: argv, environment, and why it cannot run.
    fn command(&self, ctx: &StageContext<'_>) -> StageCommand;

    /// The GPU memory (MiB) a stage of `tool` needs for a program whose
    /// plain run peaked at `peak` MiB, margin included (peaks are sampled,
    /// not exact): how many stages fit on a GPU at once
    /// (`plan::concurrency`). Measured on the H100 (docs/benchmarks.md,
    /// `tests/gpu/beyond/most_memory.py` at 1, 16.6 and 48 GiB).
    fn gpu_need_mib(&self, tool: Tool, peak: u64) -> u64;

    /// How long a stage of `tool` takes against the others, from their
    /// times alone on the real corpus's steps (docs/benchmarks.md): only
    /// the order and the rough ratios matter, to place the long ones on
    /// different GPUs.
    fn relative_cost(&self, tool: Tool) -> u32;

    /// The commands to start now after the stage, given the names of those
    /// already started and of those of them that have finished: asked once
    /// when the stage ends and again whenever one of them ends, so a command
    /// that reads another's output is planned once that one has finished.
    /// Those returned together run at once; none when there is nothing to
    /// start now. The supervisor runs them and records how each ended
    /// (`StageRecord::imports`).
    fn follow_ups(
        &self,
        _stage: &FollowUpContext<'_>,
        _started: &[String],
        _finished: &[String],
    ) -> Vec<FollowUp> {
        Vec::new()
    }

    /// Called once the follow-ups have all ended (the core dump stage
    /// deletes the dumps it read, unless they are to be kept).
    fn after_follow_ups(&self, _stage: &FollowUpContext<'_>) {}

    /// Whether the stage reads an earlier stage's output, so that it cannot
    /// start before the stages planned ahead of it end.
    fn needs_earlier_stages(&self) -> bool {
        false
    }

    /// Facts to keep right after the stage, while they still exist (the
    /// memory stage names the processes that held the GPU).
    fn after_stage(&self, _stage_dir: &Path) {}

    /// The steps of a training or inference loop (`torch.optim` steps, else
    /// top-level model calls) after which `tool`'s stage ends a Python
    /// program by default (`plan::Coverage::FirstSteps`), or `None`: the
    /// program runs to its end. What a stage needs decides it: a cost per
    /// launch (the sanitizers, ncu) sees the kernels of a loop in its first
    /// steps, which every later step launches again.
    fn first_steps(&self, _tool: Tool) -> Option<u32> {
        None
    }

    /// Narrows the stage's command by what the plain run showed (ncu need
    /// not follow children that never used the GPU). Called before a tool
    /// stage starts, when the plain run finished.
    fn after_plain(&self, _command: &mut StageCommand, _plain: &StageRecord) {}

    /// Whether a try that just ended runs again, and why (`retry`): by
    /// default the answers the kinds share (crowded out beside other
    /// stages; compute-sanitizer itself dead of a fault, for its stages).
    fn retry(&self, end: &retry::TryEnded<'_>) -> Option<retry::Retry> {
        retry::answer(end)
    }

    /// Reads the stage's artifacts into the report and judges the stage.
    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged;
}

/// What a kind needs to plan its stage, from the run's settings.
pub struct StageContext<'a> {
    /// The stage's tool.
    pub tool: Tool,
    /// The program and its arguments.
    pub program: &'a [OsString],
    /// Whether the program is a Python process.
    pub python: bool,
    /// The run directory.
    pub run_dir: &'a Path,
    /// The stage's folder in it.
    pub stage_dir: &'a Path,
    /// Where the external tools are.
    pub tools: &'a ToolPaths,
    /// Keep PyTorch's caching allocator on under the sanitizers.
    pub keep_caching_allocator: bool,
    /// memcheck's `--leak-check full` for this program.
    pub leak_check: bool,
    /// Which launches the sanitizers check.
    pub sanitizer_launches: &'a sanitizer::SanitizerLaunches,
    /// compute-sanitizer's own suppressions file.
    pub sanitizer_suppressions: Option<&'a Path>,
    /// Which launches ncu profiles.
    pub ncu: &'a ncu::NcuOptions,
    /// The program's own kernels whose names a library's or PyTorch's
    /// carry: the stages' filters of those kernels keep them
    /// (`library_kernels`).
    pub own_library_named: &'a [String],
    /// The oom-recovery stage's cap, as a share of the measured peak.
    pub oom_recovery_share: f64,
    /// The user's `PYTHONPATH`, which the hook's stages keep after theirs.
    pub pythonpath: Option<String>,
    /// The user's `PYTORCH_CUDA_ALLOC_CONF`.
    pub alloc_conf: Option<String>,
    /// The MPS control daemon's pipe folder, when the GPU is shared through
    /// MPS.
    pub mps_pipe: Option<&'a Path>,
}

/// A stage's process as its kind plans it.
#[derive(Debug, Clone, Default)]
pub struct StageCommand {
    /// Full command line, tool first.
    pub argv: Vec<OsString>,
    /// Variables to set.
    pub env: Vec<(String, String)>,
    /// Variables to remove.
    pub env_remove: Vec<String>,
    /// Why it cannot start (its tool was found nowhere).
    pub cannot_start: Option<String>,
    /// Why it is not run on purpose: it does not apply to this program, or
    /// the plain run's out-of-memory error blocks it (never run, never
    /// clean; the stage is skipped, saying this).
    pub not_applicable: Option<String>,
    /// Files the stage reads, written before it starts: ncu's section
    /// file (which must be a file in a folder), the sanitizers' script that
    /// runs each rank of a launcher under its own compute-sanitizer.
    pub files: Vec<StageFile>,
}

impl StageCommand {
    /// The program itself, with `CUDAWATCH_STAGE` naming the stage.
    pub fn program(ctx: &StageContext<'_>) -> StageCommand {
        StageCommand {
            argv: ctx.program.to_vec(),
            env: vec![("CUDAWATCH_STAGE".into(), ctx.tool.name().into())],
            ..StageCommand::default()
        }
    }

    /// Whether nothing called for the stage (its reason begins `not
    /// needed:`): not run, and not shown.
    pub fn not_needed(&self) -> bool {
        self.not_applicable
            .as_deref()
            .is_some_and(cudawatch_model::is_not_needed)
    }

    /// An external tool's argv around the program; it cannot start when
    /// the tool was found nowhere.
    pub fn tool(ctx: &StageContext<'_>, argv: Vec<OsString>) -> StageCommand {
        let cannot_start = argv
            .first()
            .and_then(|exe| ctx.tools.missing(Path::new(exe)))
            .map(str::to_string);
        StageCommand {
            argv,
            cannot_start,
            ..StageCommand::program(ctx)
        }
    }
}

/// A file a stage's command needs in its folder.
#[derive(Debug, Clone)]
pub struct StageFile {
    /// Where it goes.
    pub path: PathBuf,
    /// What it holds.
    pub contents: String,
    /// Whether it is a script the program runs (mode 0755).
    pub executable: bool,
}

/// What a follow-up is planned from: the stage as it ran.
pub struct FollowUpContext<'a> {
    /// The stage's tool.
    pub tool: Tool,
    /// The stage's folder.
    pub stage_dir: &'a Path,
    /// The stage's command.
    pub command: &'a StageCommand,
    /// Where the external tools are.
    pub tools: &'a ToolPaths,
    /// Keep the GPU core dumps once read (`--keep-dumps`).
    pub keep_dumps: bool,
}

/// A command after the stage.
#[derive(Debug, Clone)]
pub struct FollowUp {
    /// Its name in `stage.json` (`raw.csv`, `expandable`).
    pub name: String,
    /// Its command line.
    pub argv: Vec<OsString>,
    /// Variables to set.
    pub env: Vec<(String, String)>,
    /// Variables to remove.
    pub env_remove: Vec<String>,
    /// Where its stdout goes (its folder is created).
    pub stdout: PathBuf,
    /// Where its stderr goes.
    pub stderr: PathBuf,
    /// Its limit; `None`: the stage's own.
    pub timeout: Option<Duration>,
}

/// A stage judged from its artifacts.
#[derive(Debug, Clone)]
pub struct StageJudged {
    /// Clean, findings, inconclusive, ...
    pub outcome: Outcome,
    /// Why, in one line.
    pub reason: String,
    /// The tool's own summary.
    pub summary: ToolSummary,
}

impl StageJudged {
    /// A stage that runs the program itself (csan, memory): when the
    /// program failed under it and that failure is already a finding (the
    /// plain run's assert), the stage is blocked by it, as a sanitizer
    /// stage stopped by the same assert is.
    pub fn of_program((outcome, reason): (Outcome, String), record: &StageRecord) -> StageJudged {
        StageJudged {
            outcome,
            reason,
            summary: ToolSummary {
                target_failed: !matches!(
                    record.end,
                    cudawatch_model::ProcessEnd::Exited(0)
                        | cudawatch_model::ProcessEnd::NotStarted
                ),
                ..ToolSummary::default()
            },
        }
    }

    /// A judgement with no tool summary.
    pub fn new((outcome, reason): (Outcome, String)) -> StageJudged {
        StageJudged {
            outcome,
            reason,
            summary: ToolSummary::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> ToolPaths {
        ToolPaths::resolve(Some(Path::new("/bin/true")), Some(Path::new("/bin/true")))
    }

    fn ctx<'a>(tool: Tool, python: bool, paths: &'a ToolPaths, dir: &'a Path) -> StageContext<'a> {
        const NCU: ncu::NcuOptions = ncu::NcuOptions {
            launch_cap: 1,
            all_launches: false,
            kernel: None,
            vendor_kernels: false,
        };
        static LAUNCHES: sanitizer::SanitizerLaunches = sanitizer::SanitizerLaunches {
            count: None,
            skip: None,
            kernel: None,
            recover_kernels: false,
            library_kernels: false,
            racecheck_first_block: false,
            initcheck_host_stacks: false,
            flood_records: 0,
            loop_seconds: 0,
        };
        StageContext {
            tool,
            program: std::slice::from_ref(&PROGRAM),
            python,
            run_dir: Path::new("/r"),
            stage_dir: dir,
            tools: paths,
            keep_caching_allocator: false,
            leak_check: false,
            sanitizer_launches: &LAUNCHES,
            sanitizer_suppressions: None,
            ncu: &NCU,
            own_library_named: &[],
            oom_recovery_share: 0.6,
            pythonpath: Some("/site".into()),
            alloc_conf: None,
            mps_pipe: None,
        }
    }

    static PROGRAM: std::sync::LazyLock<OsString> = std::sync::LazyLock::new(|| "prog".into());

    #[test]
    fn every_stage_a_run_can_have_has_a_kind() {
        // `kind` is exhaustive by construction; this pins that the stages
        // `--stages` offers each plan a command.
        let paths = paths();
        for tool in Tool::STAGES {
            let dir = Path::new("/r").join(tool.name());
            let command = kind(tool).command(&ctx(tool, true, &paths, &dir));
            assert!(!command.argv.is_empty(), "{tool}");
            assert!(
                command
                    .env
                    .contains(&("CUDAWATCH_STAGE".into(), tool.name().into()))
            );
        }
    }

    #[test]
    fn the_hooks_stages_run_the_program_for_real_with_their_switch_on() {
        let paths = paths();
        let dir = Path::new("/r/csan");
        for (tool, switch) in [
            (Tool::Csan, "TORCH_CUDA_SANITIZER"),
            (Tool::Memory, "CUDAWATCH_MEMORY"),
            (Tool::OomRecovery, "CUDAWATCH_MEMORY"),
        ] {
            let command = kind(tool).command(&ctx(tool, true, &paths, dir));
            assert!(command.env.contains(&(switch.into(), "1".into())), "{tool}");
            assert!(
                command
                    .env
                    .contains(&("PYTHONPATH".into(), "/r/hook:/site".into()))
            );
            assert_eq!(command.env_remove, ["CUDA_LAUNCH_BLOCKING"], "{tool}");
            assert!(command.not_applicable.is_none());
            let native = kind(tool).command(&ctx(tool, false, &paths, dir));
            assert!(
                native
                    .not_applicable
                    .is_some_and(|why| why.ends_with("this is not a Python program")),
                "{tool}"
            );
        }
        let capped = kind(Tool::OomRecovery).command(&ctx(Tool::OomRecovery, true, &paths, dir));
        assert!(capped.env.iter().any(|(k, _)| k == "CUDAWATCH_CAP_SHARE"));
    }
}
