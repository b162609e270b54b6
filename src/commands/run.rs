//! `cudawatch run -- PROGRAM...`: the stages in sequence, each supervised,
//! the report rewritten from the run directory after every stage so an
//! interrupted or crashed run still leaves one.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cudawatch_parsers::model::{Outcome, Tool};

use crate::cli::RunArgs;
use crate::errors::ExpectedError;
use crate::gpu_memory::Sampler;
use crate::plan::{self, Stage, ToolPaths};
use crate::progress::{Event, Progress};
use crate::render::{self, style::Style};
use crate::rundir::{self, RunRecord, StageRecord};
use crate::supervisor::{ChildSpec, Signals, signals::Shutdown, supervise};

/// Timeout of tool stages when the plain run gave no measure.
const FALLBACK_TIMEOUT: f64 = 3600.0;
/// Tool stages get this many times the plain run's time ...
const TIMEOUT_FACTOR: f64 = 40.0;
/// ... and never less than this.
const MIN_TIMEOUT: f64 = 120.0;
/// The ncu CSV imports are quick; they get this long each.
const IMPORT_TIMEOUT: Duration = Duration::from_secs(300);
/// Source pages read from an ncu profile, worst launches first.
const MAX_SOURCE_PAGES: usize = 8;

/// Runs `cudawatch run`; returns the exit code.
pub fn run(args: &RunArgs, style: Style) -> Result<i32, ExpectedError> {
    if args.program.is_empty() {
        return Err(ExpectedError::NoProgram);
    }
    // A bad --report, or one that cannot be written, must fail now, not
    // after an hour of sanitizers.
    render::check_targets(&args.output)?;
    let run_dir = args
        .out_dir
        .clone()
        .unwrap_or_else(|| default_run_dir(&args.program));
    std::fs::create_dir_all(&run_dir).map_err(|e| ExpectedError::RunDir {
        path: run_dir.display().to_string(),
        message: e.to_string(),
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ExpectedError::Usage(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(run_stages(args, &run_dir))?;
    let report = rundir::assemble(&run_dir)?;
    let code = super::conclude(report, &args.output, style)?;
    eprintln!("raw artifacts and report.json: {}", run_dir.display());
    Ok(code)
}

fn default_run_dir(program: &[OsString]) -> PathBuf {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = program
        .iter()
        .map(|a| {
            Path::new(a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .find(|n| n.ends_with(".py"))
        .or_else(|| {
            program
                .first()
                .and_then(|p| Path::new(p).file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "program".into());
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    PathBuf::from("cudawatch-runs").join(format!("{secs}-{safe}"))
}

async fn run_stages(args: &RunArgs, run_dir: &Path) -> Result<(), ExpectedError> {
    let paths = ToolPaths::resolve(args);
    let stages = plan::stages(args, &paths, run_dir);
    let mut run = RunRecord {
        cudawatch_version: env!("CARGO_PKG_VERSION").to_string(),
        target: args
            .program
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        stages: stages.iter().map(|s| s.tool).collect(),
        interrupted: false,
    };
    rundir::write_json(&run_dir.join("run.json"), &run)?;
    let mut signals = Signals::install();
    let mut progress = Progress::new(args.stream);
    let mut plain_seconds: Option<f64> = None;
    let total = stages.len();
    for (index, stage) in stages.iter().enumerate() {
        let stage_dir = run_dir.join(&stage.dir);
        std::fs::create_dir_all(&stage_dir).map_err(|e| ExpectedError::RunDir {
            path: stage_dir.display().to_string(),
            message: e.to_string(),
        })?;
        let timeout = match stage.tool {
            Tool::Plain => args.plain_timeout,
            _ => args.timeout.unwrap_or_else(|| match plain_seconds {
                Some(s) => (s * TIMEOUT_FACTOR).max(MIN_TIMEOUT),
                None => FALLBACK_TIMEOUT,
            }),
        };
        let command = shell_words(&stage.argv);
        progress.on(Event::Started {
            index,
            total,
            tool: stage.tool,
            command: &command,
        });
        let record = run_stage(stage, &stage_dir, timeout, args, &paths, &mut signals).await;
        if stage.tool == Tool::Plain && record.spawn_error.is_none() && !record.timed_out {
            plain_seconds = Some(record.seconds);
        }
        rundir::write_json(&stage_dir.join("stage.json"), &record)?;
        // Rewrite the report after every stage: a later stage may hang or
        // the user may stop the run, and what finished must not be lost.
        let report = rundir::assemble(run_dir)?;
        rundir::write_json(&run_dir.join("report.json"), &report)?;
        let outcome = report
            .stages
            .get(index)
            .map_or(Outcome::Skipped, |s| s.outcome);
        progress.on(Event::Finished {
            index,
            total,
            tool: stage.tool,
            outcome,
            seconds: record.seconds,
        });
        if signals.shutdown() != Shutdown::None {
            eprintln!(
                "interrupted: stopping after {}; the report covers what finished",
                stage.tool.name()
            );
            run.interrupted = true;
            rundir::write_json(&run_dir.join("run.json"), &run)?;
            let report = rundir::assemble(run_dir)?;
            rundir::write_json(&run_dir.join("report.json"), &report)?;
            break;
        }
    }
    Ok(())
}

async fn run_stage(
    stage: &Stage,
    stage_dir: &Path,
    timeout: f64,
    args: &RunArgs,
    paths: &ToolPaths,
    signals: &mut Signals,
) -> StageRecord {
    let spec = ChildSpec {
        argv: stage.argv.clone(),
        env: stage.env.clone(),
        env_remove: stage.env_remove.clone(),
        stdout: stage_dir.join("stdout"),
        stderr: stage_dir.join("stderr"),
        timeout: Duration::from_secs_f64(timeout.max(0.001)),
        grace: Duration::from_secs_f64(args.grace.max(0.0)),
        stream: args.stream,
    };
    let sampler = (stage.tool == Tool::Plain).then(Sampler::start);
    let end = supervise(&spec, signals, |pgid| {
        if let Some(s) = &sampler {
            s.watch(pgid);
        }
    })
    .await;
    let gpu_memory_mib = sampler.and_then(Sampler::stop);
    let mut env: Vec<String> = stage.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    env.extend(stage.env_remove.iter().map(|k| format!("-{k}")));
    let record = StageRecord {
        tool: stage.tool,
        command: stage
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        env,
        end: end.end,
        seconds: end.seconds,
        timeout_seconds: timeout,
        timed_out: end.timed_out,
        interrupted: end.interrupted,
        killed: end.killed,
        left_behind: end.left_behind,
        spawn_error: end.spawn_error.clone().or(end.write_error.clone()),
        gpu_memory_mib,
    };
    let profile = stage_dir.join("profile.ncu-rep");
    if stage.tool == Tool::Ncu && profile.exists() && signals.shutdown() == Shutdown::None {
        import_ncu(&paths.ncu, &profile, stage_dir, args, signals).await;
    }
    record
}

/// Reads the ncu profile back as CSV pages: raw and details, then the
/// source pages of the launches that waste the most sectors.
async fn import_ncu(
    ncu: &Path,
    profile: &Path,
    stage_dir: &Path,
    args: &RunArgs,
    signals: &mut Signals,
) {
    let spec = |name: &str, argv: Vec<OsString>| ChildSpec {
        argv,
        env: Vec::new(),
        env_remove: Vec::new(),
        stdout: stage_dir.join(name),
        stderr: stage_dir.join(format!("{name}.stderr")),
        timeout: IMPORT_TIMEOUT,
        grace: Duration::from_secs_f64(args.grace.max(0.0)),
        stream: false,
    };
    for (name, argv) in plan::ncu_imports(ncu, profile) {
        supervise(&spec(&name, argv), signals, |_| {}).await;
    }
    let raw = std::fs::read(stage_dir.join("raw.csv")).unwrap_or_default();
    let mut launches = cudawatch_parsers::ncu::raw::parse(&raw).unwrap_or_default();
    launches.retain(|k| k.excessive_sectors.unwrap_or(0.0) > 0.0);
    launches.sort_by(|a, b| {
        b.excessive_sectors
            .unwrap_or(0.0)
            .total_cmp(&a.excessive_sectors.unwrap_or(0.0))
    });
    for launch in launches.iter().take(MAX_SOURCE_PAGES) {
        let (name, argv) = plan::ncu_source_import(ncu, profile, launch.launch_id);
        supervise(&spec(&name, argv), signals, |_| {}).await;
    }
}

/// The command line as a shell would show it (for progress lines).
fn shell_words(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            if s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,".contains(c))
            {
                s.into_owned()
            } else {
                format!("'{s}'")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
