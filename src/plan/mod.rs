//! What a run will do: each stage's argv, environment and folder, and the
//! timeouts, from settings resolved once (`cli::settings`). Pure: no
//! processes, no files; the supervisor executes a plan.

pub mod program;
mod python;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cudawatch_model::Tool;

use crate::tools::ToolPaths;
use crate::tools::ncu::{self, NcuOptions};
use crate::tools::sanitizer::{self, SanitizerCall, SanitizerLaunches};
use crate::tools::{csan, memory};

pub use python::is_python;

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
    /// Where the tools are.
    pub tools: ToolPaths,
    /// `--parallel-stages`: after the plain run, the tool stages run at
    /// once, one per GPU of this list; empty: one stage at a time.
    pub parallel_gpus: Vec<String>,
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
        match tool {
            Tool::Plain => self.plain,
            _ => self.tool.unwrap_or_else(|| match plain_seconds {
                Some(s) => Duration::try_from_secs_f64(s * TIMEOUT_FACTOR)
                    .unwrap_or(FALLBACK_TIMEOUT)
                    .max(MIN_TIMEOUT),
                None => FALLBACK_TIMEOUT,
            }),
        }
    }
}

/// One stage: a process to run and what to call its outputs.
#[derive(Debug, Clone)]
pub struct Stage {
    /// The tool.
    pub tool: Tool,
    /// Full command line, tool first.
    pub argv: Vec<OsString>,
    /// Variables to set.
    pub env: Vec<(String, String)>,
    /// Variables to remove.
    pub env_remove: Vec<String>,
    /// The stage's folder in the run directory (`memcheck`, `ncu`, ...).
    pub dir: PathBuf,
    /// Why the stage cannot start (its tool was found nowhere): the
    /// supervisor records this instead of spawning.
    pub cannot_start: Option<String>,
    /// Why the stage does not apply to this program (CSAN to a program
    /// that is not Python): recorded, never run, never clean.
    pub not_applicable: Option<String>,
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
    /// ncu, for the imports after its stage.
    pub ncu: PathBuf,
    /// The GPUs the tool stages share under `--parallel-stages`.
    pub parallel_gpus: Vec<String>,
}

/// The plan for `settings` in `run_dir`.
pub fn plan(settings: &RunSettings, run_dir: &Path) -> Plan {
    let python = is_python(&settings.program);
    Plan {
        stages: settings
            .stages
            .iter()
            .map(|tool| stage(*tool, settings, run_dir, python))
            .collect(),
        timeouts: settings.timeouts,
        stream: settings.stream,
        ncu: settings.tools.ncu.clone(),
        parallel_gpus: settings.parallel_gpus.clone(),
    }
}

fn stage(tool: Tool, settings: &RunSettings, run_dir: &Path, python: bool) -> Stage {
    let dir = run_dir.join(tool.name());
    let mut env = vec![("CUDAWATCH_STAGE".to_string(), tool.name().to_string())];
    let mut env_remove = Vec::new();
    let program = &settings.program;
    let mut not_applicable = None;
    let argv = match tool {
        Tool::Plain => {
            env.push(("CUDA_LAUNCH_BLOCKING".into(), "1".into()));
            program.clone()
        }
        Tool::Csan => {
            not_applicable = csan::not_applicable(python);
            let (set, remove) = csan::env(run_dir, &dir, std::env::var("PYTHONPATH").ok());
            env.extend(set);
            env_remove.extend(remove);
            program.clone()
        }
        Tool::Memory => {
            not_applicable = memory::not_applicable(python);
            let (set, remove) = memory::env(run_dir, &dir, std::env::var("PYTHONPATH").ok());
            env.extend(set);
            env_remove.extend(remove);
            program.clone()
        }
        Tool::OomRecovery => {
            not_applicable = memory::not_applicable(python);
            let (set, remove) = memory::env(run_dir, &dir, std::env::var("PYTHONPATH").ok());
            env.extend(set);
            env.extend(memory::cap_env(run_dir, settings.oom_recovery_share));
            env_remove.extend(remove);
            program.clone()
        }
        Tool::Ncu => ncu::profile_argv(
            &settings.tools.ncu,
            &settings.ncu,
            &dir.join("profile"),
            program,
        ),
        Tool::Memcheck | Tool::Racecheck | Tool::Initcheck | Tool::Synccheck | Tool::Sanitizer => {
            if python && !settings.keep_caching_allocator {
                let (set, remove) =
                    python::allocator_off(std::env::var("PYTORCH_CUDA_ALLOC_CONF").ok());
                env.extend(set);
                env_remove.extend(remove);
            }
            let xml = dir.join(format!("{}.xml", tool.name()));
            sanitizer::argv(
                &SanitizerCall {
                    executable: &settings.tools.compute_sanitizer,
                    tool,
                    xml: &xml,
                    suppressions: settings.sanitizer_suppressions.as_deref(),
                    leak_check: settings.leak_check.applies(python),
                    launches: &settings.sanitizer_launches,
                },
                program,
            )
        }
    };
    let cannot_start = argv
        .first()
        .and_then(|exe| settings.tools.missing(std::path::Path::new(exe)))
        .filter(|_| {
            !matches!(
                tool,
                Tool::Plain | Tool::Csan | Tool::Memory | Tool::OomRecovery
            )
        })
        .map(str::to_string);
    Stage {
        tool,
        argv,
        env,
        env_remove,
        dir,
        cannot_start,
        not_applicable,
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
