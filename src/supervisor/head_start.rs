//! Tool stages started beside the plain run. Every tool stage used to wait
//! for the plain run (its peak says how many fit, its time sets their
//! limits, its GPU processes whom ncu follows), so a full check cost the
//! plain run plus the longest stage; on a small PyTorch step the plain run
//! is a third of that (docs/benchmarks.md). So, when the GPU's free memory
//! is known and has room for a middling program's stages
//! (`plan::concurrency::head_start`), they start with it, on assumptions
//! the plain run then checks (`settle`):
//!
//! - its peak: while it runs, the GPUs' free memory is watched, and every
//!   stage beside it is stopped when it runs low; a plain run that ran out
//!   of memory beside them is run again alone (the oom stages must see the
//!   program's own failure, not ours); a stage that ran out, or crashed, is
//!   run again alone as any crowded stage is (`tools::starved`);
//! - how many fit: those past the real schedule's slots are stopped and
//!   start again when their turn comes;
//! - their command: a stage whose command the plain run changes (ncu
//!   follows the program alone only when no child of it used the GPU) is
//!   stopped, or its finished run dropped, and it starts again;
//! - their time limit: sent once the plain run's time is known.
//!
//! A stopped stage's folder is removed: it was our guess, not the
//! program's behaviour. The report is the one a run without a head start
//! gives; only the timings differ.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::time::Duration;

use cudawatch_model::Tool;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::child::Steer;
use super::events::StageEvent;
use super::notices::Notices;
use super::signals::{Shutdown, Signals};
use super::stage_run::{self, AloneGate, Begin, Place};
use crate::errors::ExpectedError;
use crate::plan::Plan;
use crate::plan::concurrency::{self, Schedule};
use crate::tools::StageRecord;

/// The share of a GPU's free memory (as it was before the plain run)
/// below which the stages beside the plain run are stopped: the program
/// needs more than was assumed, and the stages' own allocations must not
/// be what makes it fail.
const LOW_WATER: f64 = 0.25;

/// How often the free memory is read while the plain run runs.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// A tool stage started beside the plain run.
pub struct Early {
    /// The slot it runs on (its GPU when pinned).
    slot: Option<String>,
    /// The command it was started with.
    argv: Vec<OsString>,
    /// The variables its kind set (its GPU's aside): the memory stage's
    /// first steps become the whole program after an out-of-memory error.
    env: Vec<(String, String)>,
    /// Whether it was started as not applicable (never run).
    not_applicable: bool,
    /// Told to stop while the plain run ran (the GPU's memory ran low).
    stopped: bool,
    /// Running, or finished.
    state: EarlyState,
}

/// Where a stage started beside the plain run is.
enum EarlyState {
    /// Still running: its orders, and its end.
    Running {
        /// New time limit, or stop.
        steer: watch::Sender<Steer>,
        /// The stage's record, and whether a stop order ended it.
        task: JoinHandle<(StageRecord, bool)>,
    },
    /// Ended before the plain run did, or since.
    Finished(Box<StageRecord>),
}

/// The stages started beside the plain run, once it has ended: what the
/// batch after it takes over.
#[derive(Default)]
pub struct Started {
    /// The stages, by plan index.
    pub early: BTreeMap<usize, Early>,
    /// Each GPU's free memory before any of them started: what the tool
    /// stages share (the free memory now counts the early stages' own).
    /// `None` when none started.
    pub free_before: Option<Vec<Option<u64>>>,
    /// What became of them when none is left to settle (all stopped
    /// because the plain run ran out of memory), for the schedule's reason.
    stopped: Option<String>,
}

/// The stages from `batch` to start beside the plain run at `plain_index`,
/// when there is room; `None` to run the plain run alone, as before.
pub async fn decide(
    plan: &Plan,
    plain_index: usize,
    batch: std::ops::Range<usize>,
) -> Option<(Schedule, Vec<Option<u64>>)> {
    let plain = &plan.stages[plain_index];
    if plain.command.cannot_start.is_some() || plan.concurrency.gpus.is_empty() {
        return None;
    }
    let tools: Vec<Tool> = plan.stages[batch].iter().map(|s| s.tool).collect();
    let gpus = plan.concurrency.gpus.clone();
    let free = tokio::task::spawn_blocking(move || super::gpu_memory::free_mib(&gpus))
        .await
        .unwrap_or_default();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let schedule = concurrency::head_start(&plan.concurrency, &tools, &free, cpus)?;
    Some((schedule, free))
}

/// What the stages beside the plain run are started with before it ends:
/// the command the plain run most often leaves them (the program alone on
/// the GPU, a peak far from the GPU's size).
fn assumed_plain() -> StageRecord {
    let mut plain = StageRecord::unfinished(Tool::Plain);
    plain.unfinished = false;
    plain.gpu_leader_only = Some(true);
    plain
}

/// Runs the plain run at `plain_index` with the first `schedule.slots`
/// stages of `batch` beside it; returns when the plain run has ended (run
/// again alone if it ran out of memory beside them). Its Finished event
/// is the caller's to send.
// Over 100 lines on purpose: one select! loop over the plain run and the stages
// beside it, which share its state.
pub async fn run(
    plan: &Plan,
    (plain_index, batch): (usize, std::ops::Range<usize>),
    ((schedule, free_before), gate): ((Schedule, Vec<Option<u64>>), &AloneGate),
    (signals, notices): (&mut Signals, &Notices),
    on_event: &mut impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<(StageRecord, Started), ExpectedError> {
    on_event(StageEvent::Scheduled {
        at_once: schedule.slots.len(),
        why: &schedule.why,
    })?;
    let plain_run = stage_run::prepare(
        plan,
        plain_index,
        &stage_run::Start {
            plain: None,
            assumed: None,
            slot: None,
            label: "",
        },
    )?;
    stage_run::announce(plan, plain_index, &plain_run, on_event)?;
    let plain_plan = std::rc::Rc::new(plan.clone());
    let plain_task = {
        let (plan, gate) = (plain_plan.clone(), gate.clone());
        let notices = notices.clone();
        tokio::task::spawn_local(async move {
            let mut signals = Signals::install();
            // Whether it runs again alone is the head start's to say, below.
            let place = Place {
                plain: None,
                beside_others: false,
                steer: None,
                gate: &gate,
                alone_later: true,
            };
            let begin = Begin::First(plain_run);
            stage_run::run_tries(&plan, plain_index, begin, place, (&mut signals, &notices))
                .await
                .0
        })
    };
    let assumed = assumed_plain();
    let mut early = BTreeMap::new();
    for (offset, slot) in schedule.slots.iter().enumerate() {
        let index = batch.start + offset;
        let start = stage_run::Start {
            plain: None,
            assumed: Some(&assumed),
            slot: slot.as_ref(),
            label: "  [beside the plain run]",
        };
        let prepared = stage_run::prepare(plan, index, &start)?;
        stage_run::announce(plan, index, &prepared, on_event)?;
        let stage = &prepared.stage;
        // What its kind set, its GPU aside: settle compares it with the
        // command the real plain run gives.
        let env: Vec<(String, String)> = stage
            .command
            .env
            .iter()
            .filter(|(k, _)| k != "CUDA_VISIBLE_DEVICES")
            .cloned()
            .collect();
        let (steer, orders) = watch::channel(Steer::Limit(prepared.limit));
        let argv = stage.command.argv.clone();
        let not_applicable = stage.command.not_applicable.is_some();
        let (plan, gate) = (plain_plan.clone(), gate.clone());
        let notices = notices.clone();
        let task = tokio::task::spawn_local(async move {
            let mut signals = Signals::install();
            // Whether it runs again alone is weighed once the plain run
            // has ended, by the batch that takes it over.
            let place = Place {
                plain: None,
                beside_others: true,
                steer: Some(orders),
                gate: &gate,
                alone_later: true,
            };
            let begin = Begin::First(prepared);
            stage_run::run_tries(&plan, index, begin, place, (&mut signals, &notices)).await
        });
        early.insert(
            index,
            Early {
                slot: slot.clone(),
                argv,
                env,
                not_applicable,
                stopped: false,
                state: EarlyState::Running { steer, task },
            },
        );
    }
    let plain = watch_memory(plan, plain_task, &free_before, &mut early).await;
    let plain = match plain {
        Some(record) => record,
        None => {
            return Err(ExpectedError::Setup(
                "the plain run's task failed; nothing was judged".into(),
            ));
        }
    };
    // A plain run that ran out of memory beside the early stages: they
    // go, and it runs again alone.
    let plain_dir = plan.stages[plain_index].dir.clone();
    let crowded = (signals.shutdown() == Shutdown::None && !plain.timed_out)
        .then(|| crate::tools::starved::plain_crowded(&plain_dir))
        .flatten();
    let Some(why) = crowded else {
        return Ok((
            plain,
            Started {
                early,
                free_before: Some(free_before),
                stopped: None,
            },
        ));
    };
    let started = schedule.slots.len();
    stop_running(plan, &mut early).await;
    let retry = crate::tools::retry::Retry::alone(format!("the plain run {why}"), "crowded", false);
    let place = Place {
        plain: None,
        beside_others: true,
        steer: None,
        gate,
        alone_later: false,
    };
    let begin = Begin::Again(Box::new(plain), retry);
    let (again, _) =
        stage_run::run_tries(plan, plain_index, begin, place, (signals, notices)).await;
    Ok((
        again,
        Started {
            early,
            free_before: Some(free_before),
            stopped: Some(format!(
                "{started} had started beside the plain run, stopped when it ran out of memory"
            )),
        },
    ))
}

/// Waits for the plain run, reading the GPUs' free memory meanwhile: when
/// one falls below [`LOW_WATER`] of what it was, every early stage still
/// running is told to stop (they start again, as many as fit, after the
/// plain run). Early stages that end meanwhile keep their result in their
/// task until `settle` reads it.
async fn watch_memory(
    plan: &Plan,
    mut plain_task: JoinHandle<StageRecord>,
    free_before: &[Option<u64>],
    early: &mut BTreeMap<usize, Early>,
) -> Option<StageRecord> {
    let mut tick = tokio::time::interval(WATCH_EVERY);
    let mut watching = true;
    loop {
        tokio::select! {
            plain = &mut plain_task => return plain.ok(),
            _ = tick.tick(), if watching => {
                let gpus = plan.concurrency.gpus.clone();
                let now = tokio::task::spawn_blocking(move || super::gpu_memory::free_mib(&gpus))
                    .await
                    .unwrap_or_default();
                let low = free_before.iter().zip(&now).any(|(before, now)| {
                    matches!((before, now), (Some(b), Some(n)) if (*n as f64) < *b as f64 * LOW_WATER)
                });
                if low {
                    for e in early.values_mut() {
                        if let EarlyState::Running { steer, .. } = &e.state {
                            let _ = steer.send(Steer::Cancel);
                            e.stopped = true;
                        }
                    }
                    watching = false;
                }
            }
        }
    }
}

/// Stops every early stage whose task was not yet read (one that just
/// ended is dropped too: memory was short beside it) and forgets it, its
/// folder too: it starts again when its turn comes.
async fn stop_running(plan: &Plan, early: &mut BTreeMap<usize, Early>) {
    let running: Vec<usize> = early
        .iter()
        .filter(|(_, e)| matches!(e.state, EarlyState::Running { .. }))
        .map(|(i, _)| *i)
        .collect();
    for index in running {
        if let Some(e) = early.remove(&index) {
            drop_run(e).await;
            let _ = std::fs::remove_dir_all(&plan.stages[index].dir);
        }
    }
}

/// Ends an early stage's run: a stop order if it still runs, then its end.
async fn drop_run(early: Early) {
    if let EarlyState::Running { steer, task } = early.state {
        let _ = steer.send(Steer::Cancel);
        let _ = task.await;
    }
}

/// After the plain run: keeps the early stages that the real `schedule`
/// would have started with the command they run, tells them their real
/// time limit, and stops or drops the others (their folders removed; they
/// run again in their turn). After a stop by the user, every early stage
/// is waited for as it is: it ran, and is reported. Returns a line for
/// the schedule's reason.
pub async fn settle(
    plan: &Plan,
    started_beside: &mut Started,
    batch_start: usize,
    plain: Option<&StageRecord>,
    schedule: &Schedule,
    stopping: bool,
) -> Option<String> {
    let early = &mut started_beside.early;
    if early.is_empty() {
        return started_beside.stopped.take();
    }
    let started = early.len();
    // Stopped by the user: each ends on its own and is reported as it ran
    // (they are the batch's first stages, so the pool takes them all).
    if stopping {
        return None;
    }
    // Those that ended meanwhile are finished runs, unless a stop order
    // ended them.
    // (A task that failed left no record worth keeping: it runs again.)
    for (index, e) in early.iter_mut() {
        if let EarlyState::Running { task, .. } = &mut e.state
            && task.is_finished()
        {
            let ended = task.await.ok();
            e.stopped |= ended.as_ref().is_none_or(|(_, cancelled)| *cancelled);
            let record = ended.map_or_else(
                || StageRecord::unfinished(plan.stages[*index].tool),
                |(record, _)| record,
            );
            e.state = EarlyState::Finished(Box::new(record));
        }
    }
    let mut dropped = Vec::new();
    for (index, e) in early.iter_mut() {
        let stage = &plan.stages[*index];
        let wanted = stage_run::stage_after_plain(stage, plain);
        // The same command, and still (not) applicable: a stage planned
        // as not applicable runs after all when the plain run saw Python.
        let same_command = wanted.command.argv == e.argv
            && wanted.command.env == e.env
            && wanted.command.not_applicable.is_some() == e.not_applicable;
        let limit = plan.limit(stage.tool, plain);
        let keep = !e.stopped
            && match &mut e.state {
                // It ended before the plain run did, so well within the
                // limit the plain run's time gives: that is its limit.
                EarlyState::Finished(record) => {
                    record.timeout_seconds = limit.as_secs_f64();
                    same_command
                }
                EarlyState::Running { steer, .. } => {
                    let position = index - batch_start;
                    let width = plain.map(StageRecord::gpus_used).filter(|n| *n > 0);
                    let in_place = schedule.slots.get(position).is_some_and(|real| {
                        concurrency::same_place(e.slot.as_deref(), real.as_deref(), width)
                    });
                    if same_command && in_place {
                        let _ = steer.send(Steer::Limit(limit));
                    }
                    same_command && in_place
                }
            };
        if !keep {
            dropped.push(*index);
        }
    }
    for index in &dropped {
        if let Some(e) = early.remove(index) {
            let dir = plan.stages[*index].dir.clone();
            drop_run(e).await;
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    let kept = started - dropped.len();
    Some(if dropped.is_empty() {
        format!("{started} had started beside the plain run")
    } else {
        format!(
            "{started} had started beside the plain run, {kept} kept ({} started again)",
            dropped
                .iter()
                .map(|i| plan.stages[*i].tool.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// The early stage's end, as the pool awaits a stage it started: its
/// record (a task that failed leaves an unfinished one, never a clean one).
pub async fn end_of(early: Early, tool: Tool) -> StageRecord {
    let record = match early.state {
        EarlyState::Finished(record) => Some(*record),
        EarlyState::Running { steer, task } => {
            let record = task.await.ok().map(|(record, _)| record);
            // Held until the end: its last order stands.
            drop(steer);
            record
        }
    };
    record.unwrap_or_else(|| StageRecord::unfinished(tool))
}
