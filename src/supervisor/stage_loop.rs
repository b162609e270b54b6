//! The stage loop: the plain run, then the tool stages, as many at once as
//! fit (`plan::concurrency`), each supervised with the commands its kind
//! plans after it (`tools::StageKind::follow_ups`); events go to the caller,
//! in plan order, which writes the run directory and the report. A first
//! Ctrl-C stops after the running stages.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use cudawatch_model::Tool;

use super::events::StageEvent;
use super::head_start::{self, Early};
use super::notices::{self, Notices};
use super::pool::Step;
use super::signals::{Blocking, Shutdown, Signals};
use super::stage_run::{self, AloneGate, Begin, Place};
use crate::errors::ExpectedError;
use crate::plan::Plan;
use crate::plan::concurrency::{self, Measured, Schedule};
use crate::tools::StageRecord;

/// A stage's run as the pool awaits it: one it starts, or one started
/// beside the plain run.
type StageTask = Pin<Box<dyn Future<Output = StageRecord>>>;

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

// Over 100 lines on purpose: one loop over the stages' events, which share its
// state.
async fn run_stages(
    plan: &Plan,
    on_event: impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<LoopEnd, ExpectedError> {
    // The listener, shared by the loop's own steps and the notices it
    // relays from running stages while it waits on them.
    let events = std::cell::RefCell::new(on_event);
    let mut on_event = |event: StageEvent<'_>| (events.borrow_mut())(event);
    let (notices, mut heard) = notices::channel();
    let mut signals = Signals::install();
    // What lets a try run again alone, shared by every stage's tries.
    let gate = AloneGate::default();
    super::group::adopt_orphans();
    // The plain run as it finished, when it did: its time sets the tool
    // stages' timeouts, its peak memory how many fit at once, its GPU
    // processes whom ncu follows.
    let mut plain: Option<StageRecord> = None;
    // Tool stages started beside the plain run, until the batch after it
    // takes them over (`head_start`).
    let mut started: Option<head_start::Started> = None;
    let total = plan.stages.len();
    // A signal before the first stage (during a build the run waited on):
    // nothing starts.
    if signals.shutdown() != Shutdown::None {
        let _busy = Blocking::enter();
        on_event(StageEvent::Interrupted { after: None })?;
        return Ok(LoopEnd::Interrupted);
    }
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
            let width = plain
                .as_ref()
                .map(StageRecord::gpus_used)
                .filter(|n| *n > 0);
            let mut beside = started.take().unwrap_or_default();
            let mut schedule = decide(plan, &tools, (peak, width), beside.free_before.take()).await;
            let stopping = signals.shutdown() != Shutdown::None;
            if let Some(head) = head_start::settle(
                plan,
                &mut beside,
                index,
                plain.as_ref(),
                &schedule,
                stopping,
            )
            .await
            {
                schedule.why = format!("{}; {head}", schedule.why);
            }
            on_event(StageEvent::Scheduled {
                at_once: schedule.slots.len(),
                why: &schedule.why,
            })?;
            let work = run_batch(
                plan,
                index..index + batch,
                (plain.as_ref(), &gate),
                (schedule.slots, beside.early),
                (&mut signals, &notices),
                &mut on_event,
            );
            let end = notices::relaying(plan, work, &mut heard, &events).await?;
            if end == LoopEnd::Interrupted {
                return Ok(end);
            }
            index += batch;
            continue;
        }
        let next_batch = (index + 1)..(index + 1 + batch_len(plan, index + 1));
        let head = if stage.tool == Tool::Plain && next_batch.len() > 1 {
            head_start::decide(plan, index, next_batch.clone()).await
        } else {
            None
        };
        let mut record = match head {
            Some(head) => {
                let work = head_start::run(
                    plan,
                    (index, next_batch),
                    (head, &gate),
                    (&mut signals, &notices),
                    &mut on_event,
                );
                let (record, beside) = notices::relaying(plan, work, &mut heard, &events).await?;
                started = Some(beside);
                record
            }
            None => {
                let work = stage_run::run_alone(
                    plan,
                    index,
                    (plain.as_ref(), &gate),
                    (&mut signals, &notices),
                    &mut on_event,
                );
                notices::relaying(plan, work, &mut heard, &events).await?
            }
        };
        if stage.tool == Tool::Plain {
            // An out-of-memory error or a collective's timeout the tool stages
            // would only meet again;
            // a device exception the core dump can place.
            // Only a failure of the program blocks what comes after it: a
            // line it printed and got past (an OOM a batch-size finder
            // recovers from, a caught error) leaves every stage to run.
            let failed = record.timed_out || record.end != cudawatch_model::ProcessEnd::Exited(0);
            let sites = if failed {
                crate::tools::plain::sites_in(&stage.dir)
            } else {
                Vec::new()
            };
            record.out_of_memory_at = crate::tools::plain::out_of_memory_at(&sites);
            record.collective_timeout_at = crate::tools::plain::collective_timeout_at(&sites);
            record.device_exception = crate::tools::plain::device_exception_at(&sites)
                .or_else(|| crate::tools::plain::signal_a_fault_explains(record.end));
        }
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
        // though nothing was polling then) stops the run before the next,
        // once the stages started beside it have ended and are reported.
        if signals.shutdown() != Shutdown::None {
            if started.as_ref().is_some_and(|s| !s.early.is_empty()) {
                index += 1;
                continue;
            }
            let _busy = Blocking::enter();
            on_event(StageEvent::Interrupted {
                after: Some(stage.tool),
            })?;
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

/// How many of `tools` run at once: the plain run's peak GPU memory
/// against each GPU's free memory, measured now, or before the stages
/// started beside the plain run (`free_before`: they hold some now), and
/// on how many GPUs each (`width`: those the plain run's processes used).
async fn decide(
    plan: &Plan,
    tools: &[Tool],
    (plain_peak_mib, width): (Option<u64>, Option<usize>),
    free_before: Option<Vec<Option<u64>>>,
) -> Schedule {
    let allowed = &plan.concurrency;
    // NVML and nvidia-smi block: off the loop's thread.
    let gpus = allowed.gpus.clone();
    let free_mib = if let Some(free) = free_before {
        free
    } else if gpus.is_empty() {
        Vec::new()
    } else {
        tokio::task::spawn_blocking(move || super::gpu_memory::free_mib(&gpus))
            .await
            .unwrap_or_default()
    };
    let measured = Measured {
        peak_mib: plain_peak_mib,
        free_mib,
        width,
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    concurrency::schedule(allowed, tools, &measured, cpus)
}

/// Runs the stages of `range` over `slots` (one slot: one after another);
/// the events of their ends come in plan order, so the run directory and
/// the report are what a sequential run writes. Each stage's tries are its
/// own (`stage_run::run_tries`): one crowded out beside the others, or
/// whose compute-sanitizer died of a fault, runs again alone once those
/// beside it are done, before its end is reported.
async fn run_batch(
    plan: &Plan,
    range: std::ops::Range<usize>,
    (plain, gate): (Option<&StageRecord>, &AloneGate),
    (slots, mut early): (Vec<Option<String>>, BTreeMap<usize, Early>),
    (signals, notices): (&mut Signals, &Notices),
    mut on_event: impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<LoopEnd, ExpectedError> {
    let shared = std::rc::Rc::new(plan.clone());
    let plain_shared = plain.cloned().map(std::rc::Rc::new);
    let total = plan.stages.len();
    let first = range.start;
    let shared_gpu = slots.len() > 1;
    let mut next_report = first;
    let mut done: BTreeMap<usize, StageRecord> = Default::default();
    super::pool::schedule(range.len(), slots, |step| match step {
        Step::Start { index, slot } => {
            let index = first + index;
            // Started beside the plain run: its end is awaited in its turn
            // (its Started event was sent then), and its kind weighs it
            // now that the plain run has ended.
            let starting = if let Some(running) = early.remove(&index) {
                Starting::Beside(running)
            } else if signals.shutdown() != Shutdown::None {
                return Ok(None);
            } else {
                let start = stage_run::Start {
                    plain,
                    assumed: None,
                    slot: slot.as_ref(),
                    label: "",
                };
                let prepared = stage_run::prepare(plan, index, &start)?;
                stage_run::announce(plan, index, &prepared, &mut on_event)?;
                Starting::Prepared(prepared)
            };
            let (plan, plain, gate) = (shared.clone(), plain_shared.clone(), gate.clone());
            let notices = notices.clone();
            let task: StageTask = Box::pin(async move {
                let mut signals = Signals::install();
                let tool = plan.stages[index].tool;
                let (begin, beside_plain) = match starting {
                    Starting::Prepared(prepared) => (Begin::First(prepared), false),
                    Starting::Beside(running) => (
                        Begin::Ended(Box::new(head_start::end_of(running, tool).await)),
                        true,
                    ),
                };
                let place = Place {
                    plain: plain.as_deref(),
                    beside_others: shared_gpu || beside_plain,
                    steer: None,
                    gate: &gate,
                    alone_later: false,
                };
                stage_run::run_tries(&plan, index, begin, place, (&mut signals, &notices))
                    .await
                    .0
            });
            Ok(Some(task))
        }
        Step::Done { index, output, .. } => {
            done.insert(first + index, output);
            report_in_order(&mut done, &mut next_report, total, &mut on_event)?;
            Ok(None)
        }
    })
    .await?;
    if next_report < range.end || signals.shutdown() != Shutdown::None {
        let _busy = Blocking::enter();
        let after = plan.stages[next_report.saturating_sub(1)].tool;
        on_event(StageEvent::Interrupted { after: Some(after) })?;
        return Ok(LoopEnd::Interrupted);
    }
    Ok(LoopEnd::Completed)
}

/// How a stage of a batch starts.
enum Starting {
    /// Now, prepared and announced.
    Prepared(stage_run::Prepared),
    /// It started beside the plain run.
    Beside(Early),
}

/// Reports the finished stages from `next` on, in plan order, up to the
/// first still running.
fn report_in_order(
    done: &mut BTreeMap<usize, StageRecord>,
    next: &mut usize,
    total: usize,
    on_event: &mut impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<(), ExpectedError> {
    while let Some(record) = done.remove(next) {
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
