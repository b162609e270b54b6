//! `cudawatch sweep FILE --out-dir DIR` and `cudawatch merge DIR...`:
//! settings → the sweep part (run the shard, merge, compare, history) →
//! the sweep renderers; the exit code is the merged gate's.

use std::path::{Path, PathBuf};

use cudawatch_model::SweepReport;

use crate::cli::args::{MergeArgs, SweepArgs, SweepGateArgs};
use crate::cli::settings;
use crate::cli::sweep_progress::SweepProgress;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::render::{self, style::Styles};
use crate::supervisor::pool::PoolEnd;
use crate::sweep::compare::{self, Previous};
use crate::sweep::dir::SweepDir;
use crate::sweep::file::SweepFile;
use crate::sweep::merge;
use crate::sweep::run::{self as sweep_run, ShardOptions};
use crate::sweep::shard::Shard;

/// Runs `cudawatch sweep`; returns the exit code.
pub fn sweep(args: &SweepArgs, styles: Styles) -> Result<i32, ExpectedError> {
    // Everything that can be wrong is found before the first target runs.
    let file = SweepFile::load(&args.file)?;
    let shard = match &args.shard {
        Some(text) => Shard::parse(text).map_err(ExpectedError::Usage)?,
        None => Shard::from_env(|k| std::env::var(k).ok(), args.shards)?.unwrap_or(Shard::ALL),
    };
    let policy = settings::sweep_policy(&args.gate)?;
    let output = settings::sweep_output(&args.gate)?;
    render::check_targets(&output)?;
    let (baseline, history) = earlier(&args.gate, args.history.as_deref())?;
    let gpus = settings::gpus(Some(&args.gpus));
    warn_missing_tools(&file);
    let dir = SweepDir::open(&args.sweep_dir, &file)?;
    let exe = std::env::current_exe().map_err(|e| {
        ExpectedError::Setup(format!(
            "cannot find cudawatch's own executable to run targets with: {e}"
        ))
    })?;
    let options = ShardOptions {
        gpus: gpus.clone(),
        budget: args.budget.map(std::time::Duration::from_secs_f64),
        grace: std::time::Duration::from_secs_f64(args.grace),
        exe,
    };
    render::stderr::line(&format!(
        "sweep {} shard {shard}: {} in the file, {}",
        file.id(),
        crate::words::plural(file.targets.len() as u64, "target"),
        if gpus.is_empty() {
            "no GPU listed: one target at a time".to_string()
        } else {
            format!("GPUs {}: one target per GPU at a time", gpus.join(","))
        }
    ));
    let mut progress = SweepProgress::new();
    let ran = sweep_run::run_shard(
        &file,
        &dir,
        shard,
        &compare::durations(&history),
        &options,
        |e| progress.event(e),
    )?;
    progress.finish();
    let sources = merge::sources(std::slice::from_ref(&dir.path))?;
    // A shard reports its own targets; `merge` brings the shards together.
    let only = (shard.count > 1).then_some(ran.mine.as_slice());
    let mut report = merge::merge(&sources, &policy, only);
    if ran.end == PoolEnd::Interrupted {
        // Said in the verdict, and so in the exit code, by the same rule.
        report.interrupted = true;
        crate::judge::sweep::judge(&mut report);
    }
    let history_file = if shard.count == 1 {
        args.history.as_deref()
    } else {
        None
    };
    finish_report(
        &mut report,
        baseline.as_ref(),
        history,
        history_file,
        &dir.path,
        ran.seconds,
    )?;
    crate::rundir::write_json(&dir.path.join("report.json"), &report)?;
    let code = render_sweep(&report, &output, styles);
    render::stderr::line(&format!(
        "sweep directory: {} (run again on it to resume)",
        dir.path.display()
    ));
    Ok(code)
}

/// A tool the targets' `cudawatch run` will not find is said before the
/// night is spent, with its remedy: otherwise every target ends "exit 3"
/// and the cause is only in `targets/*/attempt-1.err`. Said only for the
/// targets whose stages use it (a sweep of `stages = ["plain", "ncu"]`
/// targets needs no compute-sanitizer).
fn warn_missing_tools(file: &SweepFile) {
    let given = |name: &str| std::env::var_os(name).map(PathBuf::from);
    let tools = crate::tools::ToolPaths::resolve(
        given("CUDAWATCH_COMPUTE_SANITIZER").as_deref(),
        given("CUDAWATCH_NCU").as_deref(),
    );
    for (name, why) in &tools.missing {
        let ncu = name.as_os_str() == "ncu";
        let (stages, uses): (&str, &[&str]) = if ncu {
            ("ncu stage", &["ncu"])
        } else {
            (
                "memcheck, racecheck, initcheck and synccheck stages",
                &["memcheck", "racecheck", "initcheck", "synccheck"],
            )
        };
        let using = file
            .targets
            .iter()
            .filter(|t| {
                t.stages
                    .as_ref()
                    .is_none_or(|s| s.iter().any(|stage| uses.contains(&stage.as_str())))
            })
            .count();
        let whose = match using {
            0 => continue,
            n if n == file.targets.len() => "every target's".to_string(),
            1 => "1 target's".to_string(),
            n => format!("{n} targets'"),
        };
        render::stderr::warning(&format!("{why}: {whose} {stages} will be inconclusive"));
    }
}

/// Runs `cudawatch merge`; returns the exit code.
pub fn merge(args: &MergeArgs, styles: Styles) -> Result<i32, ExpectedError> {
    let policy = settings::sweep_policy(&args.gate)?;
    let output = settings::sweep_output(&args.gate)?.human_on_stdout();
    render::check_targets(&output)?;
    let (baseline, history) = earlier(&args.gate, args.history.as_deref())?;
    let sources = merge::sources(&args.dirs)?;
    let mut report = merge::merge(&sources, &policy, None);
    let seconds = longest_shard(&args.dirs);
    let first = args
        .dirs
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    finish_report(
        &mut report,
        baseline.as_ref(),
        history,
        args.history.as_deref(),
        &first,
        seconds,
    )?;
    Ok(render_sweep(&report, &output, styles))
}

/// The baseline and the history, read before anything runs; history
/// lines that cannot be read (cut by a crash) are said and skipped.
fn earlier(
    gate: &SweepGateArgs,
    history: Option<&Path>,
) -> Result<(Option<Previous>, Vec<cudawatch_model::HistoryEntry>), ExpectedError> {
    let baseline = match gate.sweep_baseline.as_deref() {
        Some(path) => {
            let previous = compare::load_baseline(path)?;
            if previous.is_none() {
                render::stderr::note(&format!(
                    "no baseline yet: {} has no sweep before this one, so nothing is compared \
                     tonight{}",
                    path.display(),
                    if history == Some(path) {
                        "; this sweep's line starts it"
                    } else {
                        ""
                    }
                ));
            }
            previous
        }
        None => None,
    };
    let entries = match history {
        Some(path) => {
            let (entries, warnings) = compare::read_history(path)?;
            for w in warnings {
                render::stderr::warning(&w);
            }
            entries
        }
        None => Vec::new(),
    };
    Ok((baseline, entries))
}

/// Compares, adds the trend and appends the history line.
fn finish_report(
    report: &mut SweepReport,
    baseline: Option<&Previous>,
    mut history: Vec<cudawatch_model::HistoryEntry>,
    history_file: Option<&Path>,
    dir: &Path,
    seconds: f64,
) -> Result<(), ExpectedError> {
    if let Some(previous) = baseline {
        compare::compare(report, previous);
    }
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let entry = compare::entry_of(
        report,
        &dir.display().to_string(),
        seconds,
        &jiff::Timestamp::now().to_string(),
    );
    if history
        .last()
        .is_some_and(|l| l.dir == entry.dir && l.sweep_id == entry.sweep_id)
    {
        history.pop();
    }
    history.push(entry.clone());
    let keep = history.len().saturating_sub(compare::TREND_LENGTH);
    report.history = history.split_off(keep);
    if let Some(path) = history_file {
        compare::append_history(path, &entry)?;
    }
    Ok(())
}

/// Renders and returns the gate's exit code (a write error ranks with it).
pub(super) fn render_sweep(
    report: &SweepReport,
    output: &render::OutputSettings,
    styles: Styles,
) -> i32 {
    match render::sweep::render(report, output, styles) {
        Ok(()) => report.exit_code,
        Err(error) => {
            render::stderr::error(&error.to_string());
            exit_codes::worst(report.exit_code, error.exit_code())
        }
    }
}

/// The wall time of the slowest shard, from the manifests.
fn longest_shard(dirs: &[PathBuf]) -> f64 {
    dirs.iter()
        .filter_map(|d| SweepDir::existing(d).ok())
        .filter_map(|(d, _)| d.manifests().ok())
        .flatten()
        .filter_map(|m| m.seconds)
        .fold(0.0, f64::max)
}
