//! The stage loop: each stage of a plan in turn, supervised, with ncu's
//! imports after its stage; events go to the caller, which writes the run
//! directory and the report. A first Ctrl-C stops after the running stage.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use cudawatch_model::{ProcessEnd, Tool};

use super::child::{ChildEnd, ChildSpec, Output, supervise};
use super::events::StageEvent;
use super::gpu_memory::Sampler;
use super::pool::Step;
use super::signals::{Blocking, Shutdown, Signals};
use crate::errors::ExpectedError;
use crate::plan::{Plan, Stage};
use crate::rundir::StageRecord;
use crate::tools::{memory, ncu};

/// The ncu CSV imports are quick; they get this long each.
const IMPORT_TIMEOUT: Duration = Duration::from_secs(300);
/// Source pages read from an ncu profile, worst launches first.
const MAX_SOURCE_PAGES: usize = 8;

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopEnd {
    /// Every stage ran.
    Completed,
    /// The user stopped it.
    Interrupted,
}

/// Runs `plan` to its end (or the user's stop), calling `on_event` as
/// stages start and finish. An error from `on_event` ends the loop.
pub fn run(
    plan: &Plan,
    on_event: impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<LoopEnd, ExpectedError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ExpectedError::Usage(format!("cannot start the async runtime: {e}")))?;
    // A local set: `--parallel-stages` runs stages as local tasks.
    tokio::task::LocalSet::new().block_on(&runtime, run_stages(plan, on_event))
}

async fn run_stages(
    plan: &Plan,
    mut on_event: impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<LoopEnd, ExpectedError> {
    let mut signals = Signals::install();
    super::group::adopt_orphans();
    let mut plain_seconds: Option<f64> = None;
    let total = plan.stages.len();
    for (index, stage) in plan.stages.iter().enumerate() {
        // Under --parallel-stages the tool stages after the plain run
        // (whose time sets their timeouts) run at once.
        if plan.parallel_gpus.len() > 1 && stage.tool != Tool::Plain {
            return run_parallel(plan, index, plain_seconds, &mut signals, on_event).await;
        }
        create_stage_dir(stage)?;
        let timeout = plan.timeouts.for_stage(stage.tool, plain_seconds);
        let command = shell_words(&stage.argv);
        on_event(StageEvent::Started {
            index,
            total,
            tool: stage.tool,
            command: &command,
        })?;
        let record = run_stage(plan, stage, timeout, &mut signals).await;
        if stage.tool == Tool::Plain && record.spawn_error.is_none() && !record.timed_out {
            plain_seconds = Some(record.seconds);
        }
        {
            let _busy = Blocking::enter();
            on_event(StageEvent::Finished {
                index,
                total,
                record: &record,
            })?;
        }
        // A signal during the stage or while it was read in (counted even
        // though nothing was polling then) stops the run before the next.
        if signals.shutdown() != Shutdown::None {
            let _busy = Blocking::enter();
            on_event(StageEvent::Interrupted { after: stage.tool })?;
            return Ok(LoopEnd::Interrupted);
        }
    }
    Ok(LoopEnd::Completed)
}

/// Runs the stages from `first` on at once, one per GPU; the events of
/// their ends come in plan order, so the run directory and the report are
/// what a sequential run writes.
async fn run_parallel(
    plan: &Plan,
    first: usize,
    plain_seconds: Option<f64>,
    signals: &mut Signals,
    mut on_event: impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<LoopEnd, ExpectedError> {
    let shared = std::rc::Rc::new(plan.clone());
    let total = plan.stages.len();
    let slots = plan.parallel_gpus.iter().cloned().map(Some).collect();
    let mut next_report = first;
    let mut done: std::collections::BTreeMap<usize, StageRecord> = Default::default();
    super::pool::schedule(total - first, slots, |step| match step {
        Step::Start { index, slot } => {
            if signals.shutdown() != Shutdown::None {
                return Ok(None);
            }
            let index = first + index;
            let gpu = slot.clone().unwrap_or_default();
            let mut stage = plan.stages[index].clone();
            create_stage_dir(&stage)?;
            stage.env.push(("CUDA_VISIBLE_DEVICES".into(), gpu.clone()));
            let timeout = plan.timeouts.for_stage(stage.tool, plain_seconds);
            let command = shell_words(&stage.argv);
            on_event(StageEvent::Started {
                index,
                total,
                tool: stage.tool,
                command: &format!("{command}  [GPU {gpu}]"),
            })?;
            let plan = shared.clone();
            Ok(Some(async move {
                let mut signals = Signals::install();
                run_stage(&plan, &stage, timeout, &mut signals).await
            }))
        }
        Step::Done { index, output, .. } => {
            done.insert(first + index, output);
            // Ends are reported in plan order: the run directory and the
            // report are what a sequential run writes.
            while let Some(record) = done.remove(&next_report) {
                let _busy = Blocking::enter();
                on_event(StageEvent::Finished {
                    index: next_report,
                    total,
                    record: &record,
                })?;
                next_report += 1;
            }
            Ok(None)
        }
    })
    .await?;
    if next_report < total || signals.shutdown() != Shutdown::None {
        let _busy = Blocking::enter();
        let after = plan.stages[next_report.saturating_sub(1)].tool;
        on_event(StageEvent::Interrupted { after })?;
        return Ok(LoopEnd::Interrupted);
    }
    Ok(LoopEnd::Completed)
}

fn create_stage_dir(stage: &Stage) -> Result<(), ExpectedError> {
    std::fs::create_dir_all(&stage.dir).map_err(|e| ExpectedError::RunDir {
        path: stage.dir.display().to_string(),
        message: e.to_string(),
    })
}

async fn run_stage(
    plan: &Plan,
    stage: &Stage,
    timeout: Duration,
    signals: &mut Signals,
) -> StageRecord {
    let spec = ChildSpec {
        argv: stage.argv.clone(),
        env: stage.env.clone(),
        env_remove: stage.env_remove.clone(),
        output: Output::Files {
            stdout: stage.dir.join("stdout"),
            stderr: stage.dir.join("stderr"),
        },
        timeout,
        grace: plan.timeouts.grace,
        stream: plan.stream,
        cwd: None,
    };
    let sampler = (stage.tool == Tool::Plain).then(Sampler::start);
    let end = match stage
        .cannot_start
        .as_ref()
        .or(stage.not_applicable.as_ref())
    {
        Some(why) => ChildEnd::not_started(why.clone()),
        None => {
            supervise(&spec, signals, |pgid| {
                if let Some(s) = &sampler {
                    s.watch(pgid);
                }
            })
            .await
        }
    };
    let (gpu_memory_mib, sampling_note) = sampler.map_or((None, None), Sampler::stop);
    let mut env: Vec<String> = stage.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    env.extend(stage.env_remove.iter().map(|k| format!("-{k}")));
    let mut record = StageRecord {
        tool: stage.tool,
        command: stage
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        env,
        end: end.end,
        seconds: end.seconds,
        timeout_seconds: timeout.as_secs_f64(),
        timed_out: end.timed_out,
        interrupted: end.interrupted,
        killed: end.killed,
        left_behind: end.left_behind,
        unfinished: false,
        // Not applicable is a fact about the program, not a failure to start.
        not_applicable: stage.not_applicable.clone(),
        spawn_error: if stage.not_applicable.is_some() {
            None
        } else {
            end.spawn_error.clone().or(end.write_error.clone())
        },
        gpu_memory_mib,
        imports: Vec::new(),
        notes: sampling_note.into_iter().collect(),
    };
    let profile = stage.dir.join("profile.ncu-rep");
    if stage.tool == Tool::Ncu && profile.exists() && signals.shutdown() == Shutdown::None {
        record.imports = import_ncu(plan, &profile, &stage.dir, signals).await;
    }
    if stage.tool == Tool::Memory {
        // Now, while they may still run: a PID alone names nobody.
        name_other_processes(&stage.dir);
        if signals.shutdown() == Shutdown::None {
            record.imports = rerun_expandable(plan, stage, timeout, signals).await;
        }
    }
    record
}

/// The command names of the processes PyTorch's OOM message says held
/// GPU memory ("Process 1248 has 77.17 GiB memory in use"), read from
/// /proc right after the stage, into `processes.json`.
fn name_other_processes(stage_dir: &Path) {
    let Ok(stderr) = crate::rundir::files::read_at_most(&stage_dir.join("stderr"), 1 << 24) else {
        return;
    };
    let named: Vec<(u32, String)> =
        cudawatch_parsers::memory::other_processes(&String::from_utf8_lossy(&stderr))
            .into_iter()
            .filter_map(|p| {
                let comm = std::fs::read_to_string(format!("/proc/{}/cmdline", p.pid)).ok()?;
                let command = comm
                    .split('\0')
                    .filter(|a| !a.is_empty())
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ");
                (!command.is_empty()).then_some((p.pid, command.chars().take(200).collect()))
            })
            .collect();
    if !named.is_empty()
        && let Ok(json) = serde_json::to_vec(&named)
    {
        let _ = crate::rundir::files::write_atomic(&stage_dir.join("processes.json"), &json);
    }
}

/// An out-of-memory error that fragmentation caused gets the remedy
/// PyTorch's message suggests, tried: the program once more with
/// `expandable_segments:True`, its hook writing into `expandable/`.
async fn rerun_expandable(
    plan: &Plan,
    stage: &Stage,
    timeout: Duration,
    signals: &mut Signals,
) -> Vec<(String, ProcessEnd)> {
    let fragmented = memory::oom_files(&stage.dir).iter().any(|path| {
        crate::rundir::files::read(path).is_ok_and(|b| cudawatch_parsers::memory::fragmented(&b))
    });
    let dir = memory::expandable_dir(&stage.dir);
    if !fragmented || std::fs::create_dir_all(&dir).is_err() {
        return Vec::new();
    }
    let spec = ChildSpec {
        argv: stage.argv.clone(),
        env: memory::expandable_env(&stage.env, &stage.dir),
        env_remove: stage.env_remove.clone(),
        output: Output::Files {
            stdout: dir.join("stdout"),
            stderr: dir.join("stderr"),
        },
        timeout,
        grace: plan.timeouts.grace,
        stream: false,
        cwd: None,
    };
    let end = supervise(&spec, signals, |_| {}).await;
    vec![("expandable".into(), end.end)]
}

/// Reads the ncu profile back as CSV pages: raw and details, then the
/// source pages of the launches that waste the most sectors. Returns how
/// each import ended: one that failed left a page that cannot be trusted.
async fn import_ncu(
    plan: &Plan,
    profile: &Path,
    stage_dir: &Path,
    signals: &mut Signals,
) -> Vec<(String, ProcessEnd)> {
    let mut ends = Vec::new();
    let spec = |name: &str, argv: Vec<OsString>| ChildSpec {
        argv,
        env: Vec::new(),
        env_remove: Vec::new(),
        output: Output::Files {
            stdout: stage_dir.join(name),
            stderr: stage_dir.join(format!("{name}.stderr")),
        },
        timeout: IMPORT_TIMEOUT,
        grace: plan.timeouts.grace,
        stream: false,
        cwd: None,
    };
    for (name, argv) in ncu::imports(&plan.ncu, profile) {
        let end = supervise(&spec(&name, argv), signals, |_| {}).await;
        ends.push((name, end.end));
        // The user asked to stop: the remaining imports would each run
        // up to their timeout.
        if signals.shutdown() != Shutdown::None {
            return ends;
        }
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
        let (name, argv) = ncu::source_import(&plan.ncu, profile, launch.launch_id);
        let end = supervise(&spec(&name, argv), signals, |_| {}).await;
        ends.push((name, end.end));
        if signals.shutdown() != Shutdown::None {
            break;
        }
    }
    ends
}

/// The command line as a shell would take it back (for progress lines):
/// shlex quotes `'`, spaces and the rest the way a POSIX shell reads them.
fn shell_words(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            // A NUL cannot be quoted for a shell; show it as such.
            shlex::try_quote(&s).map_or_else(|_| format!("{s:?}"), |q| q.into_owned())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted_as_a_shell_reads_them() {
        let argv: Vec<OsString> = ["python3", "train.py", "--name", "it's a test", "a;b"]
            .into_iter()
            .map(OsString::from)
            .collect();
        let line = shell_words(&argv);
        assert_eq!(
            shlex::split(&line).unwrap(),
            ["python3", "train.py", "--name", "it's a test", "a;b"]
        );
    }
}
