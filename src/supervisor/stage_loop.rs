//! The stage loop: the plain run, then the tool stages, as many at once as
//! fit (`plan::concurrency`), each supervised with the commands its kind
//! plans after it (`tools::StageKind::follow_ups`); events go to the caller,
//! in plan order, which writes the run directory and the report. A first
//! Ctrl-C stops after the running stages.

use std::ffi::OsString;
use std::time::Duration;

use cudawatch_model::{ProcessEnd, Tool};

use super::child::{ChildEnd, ChildSpec, Output, supervise};
use super::events::StageEvent;
use super::gpu_memory::Sampler;
use super::pool::Step;
use super::signals::{Blocking, Shutdown, Signals};
use crate::errors::ExpectedError;
use crate::plan::concurrency::{self, Measured, Schedule};
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
    // A local set: stages that run at once are local tasks.
    tokio::task::LocalSet::new().block_on(&runtime, run_stages(plan, on_event))
}

async fn run_stages(
    plan: &Plan,
    mut on_event: impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<LoopEnd, ExpectedError> {
    let mut signals = Signals::install();
    super::group::adopt_orphans();
    // The plain run as it finished, when it did: its time sets the tool
    // stages' timeouts, its peak memory how many fit at once, its GPU
    // processes whom ncu follows.
    let mut plain: Option<StageRecord> = None;
    let total = plan.stages.len();
    let mut index = 0;
    while index < total {
        let stage = &plan.stages[index];
        // After the plain run (whose time sets the tool stages' timeouts
        // and whose peak memory says how many fit at once), the tool
        // stages up to the next that needs an earlier one's output run
        // together, as many at once as fit.
        let batch = batch_len(plan, index);
        if stage.tool != Tool::Plain && batch > 1 && plan.concurrency.jobs != Some(1) {
            let tools: Vec<Tool> = plan.stages[index..index + batch]
                .iter()
                .map(|s| s.tool)
                .collect();
            let peak = plain
                .as_ref()
                .and_then(|p| p.gpu_memory_mib)
                .map(|(peak, _)| peak);
            let schedule = decide(plan, &tools, peak).await;
            on_event(StageEvent::Scheduled {
                at_once: schedule.slots.len(),
                why: &schedule.why,
            })?;
            let end = run_batch(
                plan,
                index..index + batch,
                plain.as_ref(),
                schedule.slots,
                &mut signals,
                &mut on_event,
            )
            .await?;
            if end == LoopEnd::Interrupted {
                return Ok(end);
            }
            index += batch;
            continue;
        }
        let record =
            run_alone(plan, index, plain.as_ref(), "", &mut signals, &mut on_event).await?;
        {
            let _busy = Blocking::enter();
            on_event(StageEvent::Finished {
                index,
                total,
                record: &record,
            })?;
        }
        if stage.tool == Tool::Plain && record.spawn_error.is_none() && !record.timed_out {
            plain = Some(record.clone());
        }
        // A signal during the stage or while it was read in (counted even
        // though nothing was polling then) stops the run before the next.
        if signals.shutdown() != Shutdown::None {
            let _busy = Blocking::enter();
            on_event(StageEvent::Interrupted { after: stage.tool })?;
            return Ok(LoopEnd::Interrupted);
        }
        index += 1;
    }
    Ok(LoopEnd::Completed)
}

/// How many stages from `first` may run together: tool stages, up to the
/// first whose kind reads an earlier stage's output (oom-recovery reads
/// the memory stage's peak).
fn batch_len(plan: &Plan, first: usize) -> usize {
    plan.stages[first..]
        .iter()
        .enumerate()
        .take_while(|(i, s)| {
            s.tool != Tool::Plain && (*i == 0 || !crate::tools::kind(s.tool).needs_earlier_stages())
        })
        .count()
}

/// How many of `tools` run at once, measured now: the plain run's peak
/// GPU memory against each GPU's free memory.
async fn decide(plan: &Plan, tools: &[Tool], plain_peak_mib: Option<u64>) -> Schedule {
    let allowed = &plan.concurrency;
    // NVML and nvidia-smi block: off the loop's thread.
    let gpus = allowed.gpus.clone();
    let free_mib = if gpus.is_empty() {
        Vec::new()
    } else {
        tokio::task::spawn_blocking(move || super::gpu_memory::free_mib(&gpus))
            .await
            .unwrap_or_default()
    };
    let measured = Measured {
        peak_mib: plain_peak_mib,
        free_mib,
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    concurrency::schedule(allowed, tools, &measured, cpus)
}

/// Runs the stages of `range` over `slots` (one slot: one after another);
/// the events of their ends come in plan order, so the run directory and
/// the report are what a sequential run writes. A stage that ran out of
/// GPU memory beside others (and not in the plain run) is run again alone
/// before its end is reported.
async fn run_batch(
    plan: &Plan,
    range: std::ops::Range<usize>,
    plain: Option<&StageRecord>,
    slots: Vec<Option<String>>,
    signals: &mut Signals,
    mut on_event: impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<LoopEnd, ExpectedError> {
    let shared = std::rc::Rc::new(plan.clone());
    let total = plan.stages.len();
    let first = range.start;
    let shared_gpu = slots.len() > 1;
    let plain_dir = plan
        .stages
        .iter()
        .find(|s| s.tool == Tool::Plain)
        .map(|s| s.dir.clone());
    let mut next_report = first;
    let mut done: std::collections::BTreeMap<usize, StageRecord> = Default::default();
    let mut again: Vec<(usize, String)> = Vec::new();
    super::pool::schedule(range.len(), slots, |step| match step {
        Step::Start { index, slot } => {
            if signals.shutdown() != Shutdown::None {
                return Ok(None);
            }
            let index = first + index;
            let mut stage = stage_after_plain(&plan.stages[index], plain);
            create_stage_dir(&stage)?;
            if let Some(gpu) = slot {
                stage
                    .command
                    .env
                    .push(("CUDA_VISIBLE_DEVICES".into(), gpu.clone()));
            }
            let timeout = plan
                .timeouts
                .for_stage(stage.tool, plain.map(|p| p.seconds));
            let command = shell_words(&stage.command.argv);
            let shown = match slot {
                Some(gpu) => format!("{command}  [GPU {gpu}]"),
                None => command,
            };
            on_event(StageEvent::Started {
                index,
                total,
                tool: stage.tool,
                command: &shown,
            })?;
            let plan = shared.clone();
            Ok(Some(async move {
                let mut signals = Signals::install();
                run_stage(&plan, &stage, timeout, &mut signals).await
            }))
        }
        Step::Done { index, output, .. } => {
            let index = first + index;
            let stage = &plan.stages[index];
            let plain_ok = plain.is_some_and(|p| p.end == ProcessEnd::Exited(0));
            if shared_gpu
                && let Some(why) =
                    crate::tools::starved::of_memory(stage.tool, &stage.dir, plain_dir.as_deref())
                        .or_else(|| {
                            crate::tools::starved::crashed(
                                stage.tool,
                                &stage.dir,
                                plain_dir.as_deref(),
                                plain_ok,
                            )
                        })
            {
                again.push((index, why));
                return Ok(None);
            }
            done.insert(index, output);
            report_in_order(&mut done, &mut next_report, total, &again, &mut on_event)?;
            Ok(None)
        }
    })
    .await?;
    // The stages that ran out of memory beside others, alone now, unless
    // the user stopped the run.
    for (index, why) in std::mem::take(&mut again) {
        if signals.shutdown() != Shutdown::None {
            break;
        }
        let kept = set_aside(&plan.stages[index]);
        let mut record = run_alone(
            plan,
            index,
            plain,
            "  [again, alone]",
            signals,
            &mut on_event,
        )
        .await?;
        record.notes.push(format!(
            "{why} beside other stages, and was run again alone{}",
            kept.map(|k| format!("; the first try is in {k}"))
                .unwrap_or_default()
        ));
        done.insert(index, record);
    }
    report_in_order(&mut done, &mut next_report, total, &[], &mut on_event)?;
    if next_report < range.end || signals.shutdown() != Shutdown::None {
        let _busy = Blocking::enter();
        let after = plan.stages[next_report.saturating_sub(1)].tool;
        on_event(StageEvent::Interrupted { after })?;
        return Ok(LoopEnd::Interrupted);
    }
    Ok(LoopEnd::Completed)
}

/// Runs stage `index` with nothing beside it: its folder, its Started event
/// (its command line and `label`), the stage.
async fn run_alone(
    plan: &Plan,
    index: usize,
    plain: Option<&StageRecord>,
    label: &str,
    signals: &mut Signals,
    on_event: &mut impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<StageRecord, ExpectedError> {
    let stage = &stage_after_plain(&plan.stages[index], plain);
    create_stage_dir(stage)?;
    let timeout = plan
        .timeouts
        .for_stage(stage.tool, plain.map(|p| p.seconds));
    let command = shell_words(&stage.command.argv);
    on_event(StageEvent::Started {
        index,
        total: plan.stages.len(),
        tool: stage.tool,
        command: &format!("{command}{label}"),
    })?;
    Ok(run_stage(plan, stage, timeout, signals).await)
}

/// Reports the finished stages from `next` on, in plan order, up to the
/// first still running or waiting to run again.
fn report_in_order(
    done: &mut std::collections::BTreeMap<usize, StageRecord>,
    next: &mut usize,
    total: usize,
    again: &[(usize, String)],
    on_event: &mut impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<(), ExpectedError> {
    while !again.iter().any(|(i, _)| i == next)
        && let Some(record) = done.remove(next)
    {
        let _busy = Blocking::enter();
        on_event(StageEvent::Finished {
            index: *next,
            total,
            record: &record,
        })?;
        *next += 1;
    }
    Ok(())
}

/// Moves a crowded stage's first try to `crowded/<stage>/` in the run
/// directory (the evidence of why it ran twice); returns that path as the
/// report names it, or `None` when it could not be kept.
fn set_aside(stage: &Stage) -> Option<String> {
    let run_dir = stage.dir.parent()?;
    let name = stage.dir.file_name()?;
    let to = run_dir.join("crowded").join(name);
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(to.parent()?).ok()?;
    std::fs::rename(&stage.dir, &to).ok()?;
    Some(format!("crowded/{}", name.to_string_lossy()))
}

/// The stage as it runs: its command narrowed by what the plain run showed,
/// once there was one.
fn stage_after_plain(stage: &Stage, plain: Option<&StageRecord>) -> Stage {
    let mut stage = stage.clone();
    if let Some(plain) = plain
        && stage.tool != Tool::Plain
    {
        crate::tools::kind(stage.tool).after_plain(&mut stage.command, plain);
    }
    stage
}

/// The stage's folder, with the files its command reads.
fn create_stage_dir(stage: &Stage) -> Result<(), ExpectedError> {
    let failed = |path: &std::path::Path, e: std::io::Error| ExpectedError::RunDir {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&stage.dir).map_err(|e| failed(&stage.dir, e))?;
    for (path, contents) in &stage.command.files {
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(|e| failed(folder, e))?;
        }
        std::fs::write(path, contents).map_err(|e| failed(path, e))?;
    }
    Ok(())
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
    // Every stage's peak GPU memory: the plain run's decides how many tool
    // stages fit at once; the tools' own show what each costs.
    let sampler = Some(Sampler::start());
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
    let sampled = sampler.map(Sampler::stop).unwrap_or_default();
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
        gpu_memory_mib: sampled.peak,
        gpu_leader_only: sampled.leader_only,
        imports: Vec::new(),
        notes: sampled.note.into_iter().collect(),
        gpu_others: sampled.others,
    };
    if end.end != ProcessEnd::NotStarted {
        record.imports = follow_ups(plan, stage, timeout, signals).await;
    }
    record
}

/// The commands the stage's kind plans after it (ncu's CSV imports, the
/// memory stage's rerun), each batch at once, each command supervised like
/// a stage; none once the user asked to stop. Returns how each ended, in
/// the kind's order: one that failed left an artifact that cannot be
/// trusted.
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
        let batch = kind.follow_ups(&context, &done);
        if batch.is_empty() {
            break;
        }
        let mut running = Vec::new();
        for next in batch {
            if let Some(dir) = next.stdout.parent()
                && std::fs::create_dir_all(dir).is_err()
            {
                running.push((next.name, None));
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
            // A task each: they run at once on the loop's thread, each
            // with its own view of the user's signals.
            let task = tokio::task::spawn_local(async move {
                let mut signals = Signals::install();
                supervise(&spec, &mut signals, |_| {}).await.end
            });
            running.push((next.name, Some(task)));
        }
        for (name, task) in running {
            let end = match task {
                Some(task) => task.await.unwrap_or(ProcessEnd::NotStarted),
                None => ProcessEnd::NotStarted,
            };
            ends.push((name, end));
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
