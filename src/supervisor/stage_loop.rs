//! The stage loop: each stage of a plan in turn, supervised, with the
//! commands its kind plans after it (`tools::StageKind::follow_up`); events go to the caller, which writes the run
//! directory and the report. A first Ctrl-C stops after the running stage.

use std::ffi::OsString;
use std::time::Duration;

use cudawatch_model::{ProcessEnd, Tool};

use super::child::{ChildEnd, ChildSpec, Output, supervise};
use super::events::StageEvent;
use super::gpu_memory::Sampler;
use super::pool::Step;
use super::signals::{Blocking, Shutdown, Signals};
use crate::errors::ExpectedError;
use crate::plan::{Plan, Stage};
use crate::tools::{FollowUpContext, StageRecord};

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
pub fn run_plan(
    plan: &Plan,
    on_event: impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<LoopEnd, ExpectedError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ExpectedError::Setup(format!("cannot start the async runtime: {e}")))?;
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
        let command = shell_words(&stage.command.argv);
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
            stage
                .command
                .env
                .push(("CUDA_VISIBLE_DEVICES".into(), gpu.clone()));
            let timeout = plan.timeouts.for_stage(stage.tool, plain_seconds);
            let command = shell_words(&stage.command.argv);
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
    let command = &stage.command;
    let spec = ChildSpec {
        argv: command.argv.clone(),
        env: command.env.clone(),
        env_remove: command.env_remove.clone(),
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
    let end = match command
        .cannot_start
        .as_ref()
        .or(command.not_applicable.as_ref())
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
    let mut env: Vec<String> = command
        .env
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    env.extend(command.env_remove.iter().map(|k| format!("-{k}")));
    let mut record = StageRecord {
        tool: stage.tool,
        command: command
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
        not_applicable: command.not_applicable.clone(),
        spawn_error: if command.not_applicable.is_some() {
            None
        } else {
            end.spawn_error.clone().or(end.write_error.clone())
        },
        gpu_memory_mib,
        imports: Vec::new(),
        notes: sampling_note.into_iter().collect(),
    };
    if end.end != ProcessEnd::NotStarted {
        record.imports = follow_ups(plan, stage, timeout, signals).await;
    }
    record
}

/// The commands the stage's kind plans after it (ncu's CSV imports, the
/// memory stage's rerun), one at a time, each supervised like a stage; none
/// once the user asked to stop. Returns how each ended: one that failed
/// left an artifact that cannot be trusted.
async fn follow_ups(
    plan: &Plan,
    stage: &Stage,
    timeout: Duration,
    signals: &mut Signals,
) -> Vec<(String, ProcessEnd)> {
    let kind = crate::tools::kind(stage.tool);
    kind.after_stage(&stage.dir);
    let context = FollowUpContext {
        stage_dir: &stage.dir,
        command: &stage.command,
        tools: &plan.tools,
    };
    let mut ends: Vec<(String, ProcessEnd)> = Vec::new();
    loop {
        if signals.shutdown() != Shutdown::None {
            break;
        }
        let done: Vec<String> = ends.iter().map(|(name, _)| name.clone()).collect();
        let Some(next) = kind.follow_up(&context, &done) else {
            break;
        };
        if let Some(dir) = next.stdout.parent()
            && std::fs::create_dir_all(dir).is_err()
        {
            ends.push((next.name, ProcessEnd::NotStarted));
            continue;
        }
        let spec = ChildSpec {
            argv: next.argv,
            env: next.env,
            env_remove: next.env_remove,
            output: Output::Files {
                stdout: next.stdout,
                stderr: next.stderr,
            },
            timeout: next.timeout.unwrap_or(timeout),
            grace: plan.timeouts.grace,
            stream: false,
            cwd: None,
        };
        let end = supervise(&spec, signals, |_| {}).await;
        ends.push((next.name, end.end));
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
