//! One stage's run: its folder, its command as the plain run narrowed it,
//! the child supervised (time limit, orders, GPU memory sampled), the
//! commands its kind plans after it; and the words of its command line.
//! The stage loop and the head start both run stages through this.

use std::time::Duration;

use cudawatch_model::ProcessEnd;
use cudawatch_model::Tool;

use super::child::{ChildEnd, ChildSpec, FloodWatch, Output, Steer, supervise};
use super::events::StageEvent;
use super::gpu_memory::Sampler;
use super::notices::Notices;
use super::repeats::RepeatWatch;
use super::signals::{Shutdown, Signals};
use super::stage_run::create_stage_dir;
use crate::errors::ExpectedError;
use crate::plan::{Plan, Stage};
use crate::tools::{FollowUp, FollowUpContext, StageRecord, sanitizer};

/// Runs stage `index` with nothing beside it: its folder, its Started event
/// (its command line and `label`, after the command), the stage.
pub(super) async fn run_alone(
    plan: &Plan,
    index: usize,
    plain: Option<&StageRecord>,
    label: &str,
    (signals, notices): (&mut Signals, &Notices),
    on_event: &mut impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<StageRecord, ExpectedError> {
    let start = super::stage_run::Start {
        plain,
        assumed: None,
        slot: None,
        label,
    };
    let prepared = super::stage_run::prepare(plan, index, &start)?;
    super::stage_run::announce(plan, index, &prepared, on_event)?;
    Ok(run_stage(plan, &prepared.stage, prepared.limit, signals, notices).await)
}

/// Runs stage `index` alone, and once more when its tool died of a fault
/// before its summary (`starved::tool_crashed`), unless the user is
/// stopping the run: the stage loop's way for a stage with nothing beside
/// it (the batches decide the same as their stages end).
pub(super) async fn run_alone_or_again(
    plan: &Plan,
    index: usize,
    plain: Option<&StageRecord>,
    (signals, notices): (&mut Signals, &Notices),
    on_event: &mut impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<StageRecord, ExpectedError> {
    let record = run_alone(plan, index, plain, "", (signals, notices), on_event).await?;
    let context = super::stage_run::TryContext {
        plain,
        ..Default::default()
    };
    let retry = super::stage_run::retry_of(
        plan,
        &plan.stages[index],
        (&record, &tried_folders(&record)),
        &context,
        crate::tools::retry::When::Alone,
    );
    match retry {
        Some(retry) if signals.shutdown() == Shutdown::None => {
            run_again_alone(plan, index, plain, &retry, (signals, notices), on_event).await
        }
        _ => Ok(record),
    }
}

/// Runs stage `index` again alone after a first try that was crowded out
/// or whose tool crashed (`why`, which starts its note); the first try is
/// kept in `<folder>/<stage>/` (`crowded`, `crashed`).
pub(super) async fn run_again_alone(
    plan: &Plan,
    index: usize,
    plain: Option<&StageRecord>,
    retry: &crate::tools::retry::Retry,
    (signals, notices): (&mut Signals, &Notices),
    on_event: &mut impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<StageRecord, ExpectedError> {
    let kept = set_aside(&plan.stages[index], retry.folder);
    let mut record = run_alone(
        plan,
        index,
        plain,
        "  [again, alone]",
        (signals, notices),
        on_event,
    )
    .await?;
    let note = retry
        .note
        .clone()
        .unwrap_or_else(|| format!("{}, and was run again alone", retry.reason));
    record
        .notes
        .push(format!("{note}{}", retry.kept_said.words(kept.as_deref())));
    record.earlier_tries.insert(
        0,
        crate::tools::EarlierTry {
            reason: retry.reason.clone(),
            folder: kept.unwrap_or_default(),
            judged: retry.judged,
        },
    );
    Ok(record)
}

/// The folders of a record's earlier tries (`flooded`, `cudagraphs`): the
/// reasons it already ran again for.
pub(super) fn tried_folders(record: &StageRecord) -> Vec<&str> {
    record
        .earlier_tries
        .iter()
        .filter_map(|t| t.folder.split('/').next())
        .collect()
}

/// Moves a stage's first try to `<folder>/<stage>/` in the run directory
/// (`crowded`, `flooded`: the evidence of why it ran twice); returns that
/// path as the report names it, or `None` when it could not be kept.
fn set_aside(stage: &Stage, folder: &str) -> Option<String> {
    let run_dir = stage.dir.parent()?;
    let name = stage.dir.file_name()?;
    let to = run_dir.join(folder).join(name);
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(to.parent()?).ok()?;
    std::fs::rename(&stage.dir, &to).ok()?;
    Some(format!("{folder}/{}", name.to_string_lossy()))
}

pub(super) async fn run_stage(
    plan: &Plan,
    stage: &Stage,
    timeout: Duration,
    signals: &mut Signals,
    notices: &Notices,
) -> StageRecord {
    run_stage_steered(plan, stage, timeout, None, (signals, notices))
        .await
        .0
}

/// Runs a stage under `timeout`, or under the orders `steer` gives while it
/// runs (a stage started beside the plain run: its real limit, or stop);
/// returns its record and whether a stop order ended it. After each try
/// the stage's kind answers whether it runs again at once
/// (`StageKind::retry`, `retry::When::Now`: a flood, again without call
/// stacks; CUDA graphs the stage's settings broke, again without them);
/// each such try is kept in its folder (`flooded/`, `cudagraphs/`) with its
/// record, and the last try's record carries them all (`earlier_tries`),
/// its time theirs too. The answers to run again alone are the stage
/// loop's.
pub(super) async fn run_stage_steered(
    plan: &Plan,
    stage: &Stage,
    timeout: Duration,
    steer: Option<tokio::sync::watch::Receiver<Steer>>,
    (signals, notices): (&mut Signals, &Notices),
) -> (StageRecord, bool) {
    let mut current = stage.clone();
    let mut limit = timeout;
    let mut tried: Vec<&'static str> = Vec::new();
    let mut before = Tries::default();
    loop {
        let watch = if tried.contains(&"flooded") {
            None
        } else {
            flood_watch(plan, &current)
        };
        let (record, end) = run_once(plan, &current, limit, steer.clone(), watch, signals).await;
        let wanted = !end.cancelled && !record.interrupted && signals.shutdown() == Shutdown::None;
        let context = super::stage_run::TryContext {
            flooded: end.flooded.then_some(plan.flood_records),
            looped: end.repeating,
            ..Default::default()
        };
        let retry = wanted
            .then(|| {
                super::stage_run::retry_of(
                    plan,
                    &current,
                    (&record, &tried),
                    &context,
                    crate::tools::retry::When::Now,
                )
            })
            .flatten();
        let Some(retry) = retry else {
            return (before.onto(record), end.cancelled);
        };
        let mut next = current.clone();
        if let Some(command) = retry.command.clone() {
            next.command = command;
        }
        let kept = set_aside(&current, retry.folder);
        // The kept try keeps its record: how it ended is what the note says.
        if let (Some(kept), Some(run_dir)) = (&kept, current.dir.parent()) {
            let _ = crate::rundir::write_json(&run_dir.join(kept).join("stage.json"), &record);
        }
        if let Err(e) = create_stage_dir(&next) {
            let mut record = before.onto(record);
            record
                .notes
                .push(format!("{} and it could not run again: {e}", retry.reason));
            return (record, end.cancelled);
        }
        if let Some(notice) = &retry.notice {
            notices.say(stage.tool, notice.clone());
        }
        before.add(&record, &retry, kept);
        // The limit it ran under, as its orders left it.
        limit = Duration::from_secs_f64(record.timeout_seconds);
        tried.push(retry.folder);
        current = next;
    }
}

/// The tries of a stage run again at once, for the record of its last.
#[derive(Default)]
struct Tries {
    seconds: f64,
    notes: Vec<String>,
    earlier: Vec<crate::tools::EarlierTry>,
}

impl Tries {
    fn add(
        &mut self,
        record: &StageRecord,
        retry: &crate::tools::retry::Retry,
        kept: Option<String>,
    ) {
        let note = retry.note.clone().unwrap_or_else(|| retry.reason.clone());
        self.notes
            .push(format!("{note}{}", retry.kept_said.words(kept.as_deref())));
        self.earlier.push(crate::tools::EarlierTry {
            reason: retry.reason.clone(),
            folder: kept.unwrap_or_default(),
            judged: retry.judged,
        });
        self.seconds += record.seconds;
    }

    /// The last try's record with the earlier tries': their time, notes
    /// and folders.
    fn onto(self, mut record: StageRecord) -> StageRecord {
        record.seconds += self.seconds;
        record.notes.extend(self.notes);
        record.earlier_tries.splice(0..0, self.earlier);
        record
    }
}

/// The stage's flood watch, when it can flood and be made cheaper
/// (`tools::sanitizer::can_flood`) and the user did not turn it off.
fn flood_watch(plan: &Plan, stage: &Stage) -> Option<FloodWatch> {
    (plan.flood_records > 0 && sanitizer::can_flood(stage.tool, &stage.command.argv)).then_some(
        FloodWatch {
            marker: sanitizer::RECORD_END,
            limit: plan.flood_records,
        },
    )
}

/// The stage's repeat watch, when its records may only repeat themselves
/// in a loop its tool keeps alive (`tools::sanitizer::can_loop`) and the
/// user did not turn it off.
fn repeat_watch(plan: &Plan, stage: &Stage) -> Option<RepeatWatch> {
    (plan.loop_seconds > 0 && sanitizer::can_loop(stage.tool, &stage.command.argv)).then(|| {
        RepeatWatch {
            quiet: Duration::from_secs(plan.loop_seconds),
            ..RepeatWatch::default()
        }
    })
}

/// One run of the stage's command; its record and how its child ended.
async fn run_once(
    plan: &Plan,
    stage: &Stage,
    timeout: Duration,
    steer: Option<tokio::sync::watch::Receiver<Steer>>,
    flood: Option<FloodWatch>,
    signals: &mut Signals,
) -> (StageRecord, ChildEnd) {
    let mut command = stage.command.clone();
    if stage.tool != Tool::Plain {
        super::rendezvous::own_port(&mut command.env);
    }
    let command = &command;
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
        steer: steer.clone(),
        flood,
        repeats: repeat_watch(plan, stage),
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
    // The limit it ran under last (a stage started beside the plain run
    // got its own once the plain run's time was known).
    let timeout = match steer.map(|s| *s.borrow()) {
        Some(Steer::Limit(limit)) => limit,
        _ => timeout,
    };
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
        gpu_processes: sampled.tree,
        earlier_tries: Vec::new(),
        out_of_memory_at: None,
        collective_timeout_at: None,
        device_exception: None,
    };
    if end.end != ProcessEnd::NotStarted && !end.cancelled && !end.flooded && !end.repeating {
        record.imports = follow_ups(plan, stage, timeout, signals).await;
    }
    (record, end)
}

/// The commands the stage's kind plans after it (ncu's CSV imports, the
/// memory stage's rerun), each supervised like a stage. The kind is asked
/// again whenever one ends, so a command that needs another's output starts
/// as soon as that one is done, not when all that started with it are (ncu's
/// source pages wait for the raw page only, not for the slow call stacks);
/// nothing new starts once the user asked to stop. Returns how each ended,
/// in the order they started: one that failed left an artifact that cannot
/// be trusted.
async fn follow_ups(
    plan: &Plan,
    stage: &Stage,
    timeout: Duration,
    signals: &mut Signals,
) -> Vec<(String, ProcessEnd)> {
    let kind = crate::tools::kind(stage.tool);
    kind.after_stage(&stage.dir);
    let context = FollowUpContext {
        tool: stage.tool,
        stage_dir: &stage.dir,
        command: &stage.command,
        tools: &plan.tools,
        keep_dumps: plan.keep_dumps,
    };
    // In the order they started; `None` while running.
    let mut ends: Vec<(String, Option<ProcessEnd>)> = Vec::new();
    let mut running = tokio::task::JoinSet::new();
    let mut index_of = std::collections::HashMap::new();
    loop {
        let mut started_now = 0;
        if signals.shutdown() == Shutdown::None {
            let started: Vec<String> = ends.iter().map(|(name, _)| name.clone()).collect();
            let finished: Vec<String> = ends
                .iter()
                .filter(|(_, end)| end.is_some())
                .map(|(name, _)| name.clone())
                .collect();
            for next in kind.follow_ups(&context, &started, &finished) {
                started_now += 1;
                let index = ends.len();
                ends.push((next.name.clone(), None));
                let Some(spec) = follow_up_spec(plan, next, timeout) else {
                    ends[index].1 = Some(ProcessEnd::NotStarted);
                    continue;
                };
                // A task each: they run at once on the loop's thread, each
                // with its own view of the user's signals.
                let task = running.spawn_local(async move {
                    let mut signals = Signals::install();
                    supervise(&spec, &mut signals, |_| {}).await.end
                });
                index_of.insert(task.id(), index);
            }
        }
        if running.is_empty() {
            if started_now == 0 {
                break;
            }
            // Those planned could not start: the kind may plan others.
            continue;
        }
        let (id, end) = match running.join_next_with_id().await {
            Some(Ok((id, end))) => (id, end),
            Some(Err(error)) => (error.id(), ProcessEnd::NotStarted),
            None => break,
        };
        if let Some(&index) = index_of.get(&id) {
            ends[index].1 = Some(end);
        }
    }
    kind.after_follow_ups(&context);
    ends.into_iter()
        .map(|(name, end)| (name, end.unwrap_or(ProcessEnd::NotStarted)))
        .collect()
}

/// How a follow-up command is supervised; `None` when its folder cannot be
/// made.
fn follow_up_spec(plan: &Plan, next: FollowUp, timeout: Duration) -> Option<ChildSpec> {
    if let Some(dir) = next.stdout.parent() {
        std::fs::create_dir_all(dir).ok()?;
    }
    // A follow-up that runs the program again (initcheck's rerun with host
    // stacks, the memory stage's) may run beside other stages too.
    let mut env = next.env;
    super::rendezvous::own_port(&mut env);
    Some(ChildSpec {
        argv: next.argv,
        env,
        env_remove: next.env_remove,
        output: Output::Files {
            stdout: next.stdout,
            stderr: next.stderr,
        },
        timeout: next.timeout.unwrap_or(timeout),
        grace: plan.timeouts.grace,
        stream: false,
        cwd: None,
        steer: None,
        flood: None,
        repeats: None,
    })
}
