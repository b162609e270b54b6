//! What a run will do: each stage's argv, environment and folder, and the
//! timeouts, from settings resolved once (`cli::settings`). Pure: no
//! processes, no files; the supervisor executes a plan.

pub mod concurrency;
pub mod launcher;
pub mod program;
mod python;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cudawatch_model::Tool;

use crate::tools::ncu::NcuOptions;
use crate::tools::sanitizer::SanitizerLaunches;
use crate::tools::{self, StageCommand, StageContext, ToolPaths};

pub use concurrency::Concurrency;
pub use python::{interpreter, is_python};

/// What `cudawatch run` was asked to do, as plain data.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The program and its arguments.
    pub program: Vec<OsString>,
    /// Stages in order.
    pub stages: Vec<Tool>,
    /// The run directory, if given.
    pub out_dir: Option<PathBuf>,
    /// Stage time limits.
    pub timeouts: Timeouts,
    /// Copy each stage's output live to stderr.
    pub stream: bool,
    /// Keep PyTorch's caching allocator on under the sanitizers.
    pub keep_caching_allocator: bool,
    /// Keep the GPU core dumps once read.
    pub keep_dumps: bool,
    /// The oom-recovery stage's cap, as a share of the measured peak.
    pub oom_recovery_share: f64,
    /// Which launches ncu profiles.
    pub ncu: NcuOptions,
    /// compute-sanitizer's own suppressions file.
    pub sanitizer_suppressions: Option<PathBuf>,
    /// memcheck's leak check.
    pub leak_check: LeakCheck,
    /// Which launches the sanitizers check.
    pub sanitizer_launches: SanitizerLaunches,
    /// The program's own kernels whose names a library's or PyTorch's
    /// carry, found in its binaries once its run starts (`commands::run`):
    /// racecheck's, synccheck's and ncu's filters of those kernels keep
    /// them (`tools::library_kernels`).
    pub own_library_named: Vec<String>,
    /// Where the tools are.
    pub tools: ToolPaths,
    /// How many tool stages may run at once after the plain run, and on
    /// which GPUs.
    pub concurrency: Concurrency,
    /// The MPS control daemon's pipe folder the program would connect to,
    /// when the GPU is shared through MPS (`tools::ncu::mps`).
    pub mps_pipe: Option<PathBuf>,
    /// How much of a Python program each stage runs.
    pub coverage: Coverage,
}

/// How much of a Python program with a training or inference loop each
/// stage runs (a program without one runs to its end whatever this says:
/// the hook counts `torch.optim` steps, else top-level model calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// The default: the plain run whole (it costs one run of the program
    /// and sees an error at any step), each tool stage its kind's first
    /// steps (`StageKind::first_steps`): their cost is per launch, and a
    /// training loop's later steps launch the kernels its first ones did.
    FirstSteps,
    /// Every stage, the plain run too, ends after this many steps
    /// (`--steps N`): a script of hours is checked in minutes.
    Steps(u32),
    /// Every stage runs the program to its end (`--whole-program`).
    Whole,
}

impl Coverage {
    /// The steps after which `tool`'s stage ends the program, if any.
    pub fn steps_for(self, tool: Tool) -> Option<u32> {
        match self {
            Coverage::FirstSteps => tools::kind(tool).first_steps(tool),
            Coverage::Steps(n) => Some(n),
            Coverage::Whole => None,
        }
    }
}

/// Whether memcheck checks for leaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeakCheck {
    /// For native programs; not for interpreters, whose teardown crashes
    /// under `--leak-check full` (every PyTorch program tried: exit 7 or 11
    /// after all its output, docs/tool-surprises.md), which would cost the
    /// memory check itself.
    Auto,
    /// Always, also for Python.
    Full,
    /// Never.
    Off,
}

impl LeakCheck {
    /// Whether memcheck gets `--leak-check full` for this program.
    pub fn applies(self, python: bool) -> bool {
        match self {
            LeakCheck::Auto => !python,
            LeakCheck::Full => true,
            LeakCheck::Off => false,
        }
    }
}

/// Stage time limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    /// Tool stages; `None` derives it from the plain run.
    pub tool: Option<Duration>,
    /// The plain run.
    pub plain: Duration,
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
}

/// Tool stages get this many times the plain run's time ...
const TIMEOUT_FACTOR: f64 = 40.0;
/// ... and never less than this;
const MIN_TIMEOUT: Duration = Duration::from_secs(120);
/// without a plain run to measure, this.
const FALLBACK_TIMEOUT: Duration = Duration::from_secs(3600);

impl Timeouts {
    /// The time limit of a stage of `tool`, given how long the plain run took.
    pub fn for_stage(&self, tool: Tool, plain_seconds: Option<f64>) -> Duration {
        // Every stage but the plain run runs the program under something
        // that slows it: one rule for all of them.
        if tool == Tool::Plain {
            return self.plain;
        }
        self.tool.unwrap_or_else(|| match plain_seconds {
            Some(s) => Duration::try_from_secs_f64(s * TIMEOUT_FACTOR)
                .unwrap_or(FALLBACK_TIMEOUT)
                .max(MIN_TIMEOUT),
            None => FALLBACK_TIMEOUT,
        })
    }
}

/// One stage: a process to run and what to call its outputs.
#[derive(Debug, Clone)]
pub struct Stage {
    /// The tool.
    pub tool: Tool,
    /// Its command as its kind planned it; `cannot_start` and
    /// `not_applicable` are recorded instead of spawning.
    pub command: StageCommand,
    /// The stage's folder in the run directory (`memcheck`, `ncu`, ...).
    pub dir: PathBuf,
}

/// A whole run, ready for the supervisor.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The stages, in order.
    pub stages: Vec<Stage>,
    /// Stage time limits.
    pub timeouts: Timeouts,
    /// Copy each stage's output live to stderr.
    pub stream: bool,
    /// Where the tools are, for the commands after a stage.
    pub tools: ToolPaths,
    /// How many tool stages may run at once, and on which GPUs.
    pub concurrency: Concurrency,
    /// Records a sanitizer stage may print before it is run again without
    /// call stacks; 0: never.
    pub flood_records: u64,
    /// Seconds of only repeated records before a memcheck stage under
    /// kernel-level recovery is taken for a loop; 0: never.
    pub loop_seconds: u64,
    /// Keep the GPU core dumps once read (`--keep-dumps`).
    pub keep_dumps: bool,
}

impl Plan {
    /// The time limit of `tool`'s stage, given the plain run as it ended
    /// (`None`: not yet): the one place a stage's limit is computed.
    pub fn limit(&self, tool: Tool, plain: Option<&tools::StageRecord>) -> Duration {
        self.timeouts.for_stage(tool, plain.map(|p| p.seconds))
    }
}

/// The plan for `settings` in `run_dir`.
pub fn plan(settings: &RunSettings, run_dir: &Path) -> Plan {
    let python = is_python(&settings.program);
    let user_xla = tools::xla::UserXla::from_env();
    Plan {
        stages: settings
            .stages
            .iter()
            .map(|tool| stage(*tool, settings, run_dir, python, &user_xla))
            .collect(),
        timeouts: settings.timeouts,
        stream: settings.stream,
        tools: settings.tools.clone(),
        concurrency: settings.concurrency.clone(),
        flood_records: settings.sanitizer_launches.flood_records,
        loop_seconds: settings.sanitizer_launches.loop_seconds,
        keep_dumps: settings.keep_dumps,
    }
}

fn stage(
    tool: Tool,
    settings: &RunSettings,
    run_dir: &Path,
    python: bool,
    user_xla: &tools::xla::UserXla,
) -> Stage {
    let dir = run_dir.join(tool.name());
    let ctx = StageContext {
        tool,
        program: &settings.program,
        python,
        run_dir,
        stage_dir: &dir,
        tools: &settings.tools,
        keep_caching_allocator: settings.keep_caching_allocator,
        leak_check: settings.leak_check.applies(python),
        sanitizer_launches: &settings.sanitizer_launches,
        sanitizer_suppressions: settings.sanitizer_suppressions.as_deref(),
        ncu: &settings.ncu,
        own_library_named: &settings.own_library_named,
        oom_recovery_share: settings.oom_recovery_share,
        pythonpath: std::env::var("PYTHONPATH").ok(),
        alloc_conf: std::env::var("PYTORCH_CUDA_ALLOC_CONF").ok(),
        mps_pipe: settings.mps_pipe.as_deref(),
    };
    let mut command = tools::kind(tool).command(&ctx);
    if python && (Tool::SANITIZERS.contains(&tool) || tool == Tool::Ncu) {
        tools::hook::cudnn_benchmark_off(&mut command, &ctx);
    }
    if python {
        tools::xla::settle(
            &mut command,
            tool,
            user_xla,
            settings.keep_caching_allocator,
        );
    }
    if let (true, Some(steps)) = (python, settings.coverage.steps_for(tool)) {
        let by_default = settings.coverage == Coverage::FirstSteps;
        tools::hook::stop_after_steps(&mut command, &ctx, steps, by_default);
    }
    if let Some(launcher) = launcher::multi_process(&settings.program).filter(|l| l.several()) {
        for_several_processes(&mut command, tool, &launcher, &dir);
        if launcher.launcher == "torchrun" && tools::sanitizer::per_rank::applies(tool) {
            tools::sanitizer::per_rank::wrap(
                &mut command,
                tool,
                &settings.program,
                &dir,
                launcher.per_node,
            );
        }
    }
    Stage { tool, command, dir }
}

/// The settings of a stage of a launcher of several processes, one per
/// GPU, over NCCL (`docs/distributed.md`): every stage is marked with the
/// launcher (`CUDAWATCH_LAUNCHER`, which the report's notes read); the
/// plain run leaves `CUDA_LAUNCH_BLOCKING` unset (with it, a two-rank
/// program whose ranks disagree on a collective hung past 200 s on two
/// H100s, where without it NCCL's watchdog ended it at the process group's
/// timeout); ncu leaves NCCL's kernels out unless the user chose the
/// kernels (it serializes launches across processes, and a collective
/// waits for its peers).
fn for_several_processes(
    command: &mut tools::StageCommand,
    tool: Tool,
    launcher: &launcher::MultiProcess,
    stage_dir: &Path,
) {
    command
        .env
        .push((tools::plain::LAUNCHER_VAR.into(), launcher.launcher.into()));
    // After a collective's timeout, NCCL's watchdog waits four times
    // TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC (15 s by default) for every rank
    // to dump its flight recorder before it ends the process: measured on
    // two H100s, a 40 s timeout ended the job after 115 s, 60 of them
    // waiting. A second is enough to dump a small buffer here; the dumps go
    // into the stage's folder, kept with its artifacts. The user's own
    // settings win.
    let fr_file = stage_dir.join("fr_trace_rank_").display().to_string();
    let mut settings = vec![
        ("TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC", "1000".to_string()),
        ("TORCH_FR_DUMP_TEMP_FILE", fr_file.clone()),
        ("TORCH_NCCL_DEBUG_INFO_TEMP_FILE", fr_file),
    ];
    if launcher.launcher == "torchrun" {
        // `--tee 3` (torchrun reads each option from `PET_<NAME>` too):
        // every line a worker prints carries `[defaultN]:`, its local rank,
        // so a CSAN race (which PyTorch prints without `[rankN]:`) names the
        // rank that raced; the workers' logs go into the stage's folder.
        settings.push(("PET_TEE", "3".to_string()));
        settings.push((
            "PET_LOG_DIR",
            stage_dir.join("torchrun-logs").display().to_string(),
        ));
    }
    for (name, value) in settings {
        if std::env::var_os(name).is_none() {
            command.env.push((name.into(), value));
        }
    }
    match tool {
        Tool::Plain => command.env.retain(|(k, _)| k != "CUDA_LAUNCH_BLOCKING"),
        Tool::Ncu => {
            tools::ncu::leave_out_nccl(&mut command.argv);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_stages_get_forty_times_the_plain_run_within_bounds() {
        let t = Timeouts {
            tool: None,
            plain: Duration::from_secs(10),
            grace: Duration::from_secs(5),
        };
        assert_eq!(t.for_stage(Tool::Plain, Some(1.0)), Duration::from_secs(10));
        assert_eq!(
            t.for_stage(Tool::Memcheck, Some(10.0)),
            Duration::from_secs(400)
        );
        assert_eq!(t.for_stage(Tool::Memcheck, Some(0.1)), MIN_TIMEOUT);
        assert_eq!(t.for_stage(Tool::Memcheck, None), FALLBACK_TIMEOUT);
        assert_eq!(
            t.for_stage(Tool::Memcheck, Some(f64::MAX)),
            FALLBACK_TIMEOUT
        );
    }
}
