//! Many children at once, one per slot (a GPU): a sweep's targets, or a
//! run's tool stages at once. Each child is supervised
//! by its own `select!` loop ([`supervise`]) on a local task; this loop
//! hands out slots, starts what fits, and reports to the caller as each
//! ends. When the user stops or the budget runs out, nothing new starts:
//! what runs is stopped by its own loop (the signal forwarded, or its
//! deadline), and what never started is reported as such.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::child::{ChildEnd, ChildSpec, supervise};
use super::signals::{Shutdown, Signals};
use crate::errors::ExpectedError;

/// Where a child runs: `Some(gpu)` pins it with `CUDA_VISIBLE_DEVICES`;
/// `None` leaves the environment alone (no GPU known).
pub type Slot = Option<String>;

/// What the pool tells its caller.
pub enum PoolEvent<'a> {
    /// Job `index` starts on `slot`.
    Started {
        /// Its position in the job list.
        index: usize,
        /// Its slot.
        slot: &'a Slot,
    },
    /// Job `index` ended.
    Finished {
        /// Its position.
        index: usize,
        /// Its slot.
        slot: &'a Slot,
        /// How it ended.
        end: &'a ChildEnd,
        /// The budget, not the job's own timeout, stopped it.
        by_budget: bool,
    },
    /// Job `index` never started.
    NotStarted {
        /// Its position.
        index: usize,
        /// Why: the budget was spent or the user stopped.
        why: NotStartedWhy,
    },
}

/// Why a job never started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotStartedWhy {
    /// The sweep's wall-time budget was spent.
    Budget,
    /// SIGINT or SIGTERM.
    Interrupted,
}

/// How a pool ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolEnd {
    /// Every job ran.
    Completed,
    /// The budget stopped it.
    BudgetSpent,
    /// The user stopped it.
    Interrupted,
}

/// A budget shorter than this is spent: a child given a second would only
/// be started to be stopped.
const MIN_USEFUL: Duration = Duration::from_secs(1);

/// Runs `jobs` over `slots` (at least one), at most one per slot at a
/// time, in order, until `deadline`.
pub fn run_children(
    jobs: Vec<ChildSpec>,
    slots: Vec<Slot>,
    deadline: Option<Instant>,
    on_event: impl FnMut(PoolEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<PoolEnd, ExpectedError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ExpectedError::Setup(format!("cannot start the async runtime: {e}")))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, run_jobs(jobs, slots, deadline, on_event))
}

async fn run_jobs(
    jobs: Vec<ChildSpec>,
    slots: Vec<Slot>,
    deadline: Option<Instant>,
    mut on_event: impl FnMut(PoolEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<PoolEnd, ExpectedError> {
    let signals = Signals::install();
    let total = jobs.len();
    let mut jobs: Vec<Option<ChildSpec>> = jobs.into_iter().map(Some).collect();
    let mut end = PoolEnd::Completed;
    let started = schedule(total, slots, |step| match step {
        Step::Start { index, slot } => {
            if end == PoolEnd::Completed && signals.shutdown() != Shutdown::None {
                end = PoolEnd::Interrupted;
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if end == PoolEnd::Completed && left.is_some_and(|l| l < MIN_USEFUL) {
                end = PoolEnd::BudgetSpent;
            }
            if end != PoolEnd::Completed {
                return Ok(None);
            }
            let mut spec = jobs[index].take().expect("each job starts once");
            let by_budget = left.is_some_and(|l| l < spec.timeout);
            if let Some(l) = left {
                spec.timeout = spec.timeout.min(l);
            }
            if let Some(gpu) = slot {
                spec.env.push(("CUDA_VISIBLE_DEVICES".into(), gpu.clone()));
            }
            on_event(PoolEvent::Started { index, slot })?;
            Ok(Some(async move {
                let mut signals = Signals::install();
                (supervise(&spec, &mut signals, |_| {}).await, by_budget)
            }))
        }
        Step::Done {
            index,
            slot,
            output: (child_end, budget_cut),
        } => {
            let by_budget = budget_cut && child_end.timed_out;
            on_event(PoolEvent::Finished {
                index,
                slot,
                end: &child_end,
                by_budget,
            })?;
            if by_budget {
                end = PoolEnd::BudgetSpent;
            }
            Ok(None)
        }
    })
    .await?;
    // A signal during the last jobs stops nothing more, but is said.
    if end == PoolEnd::Completed && signals.shutdown() != Shutdown::None {
        end = PoolEnd::Interrupted;
    }
    let why = match end {
        PoolEnd::Interrupted => NotStartedWhy::Interrupted,
        _ => NotStartedWhy::Budget,
    };
    for index in started..total {
        on_event(PoolEvent::NotStarted { index, why })?;
    }
    Ok(end)
}

/// One step of [`schedule`].
pub enum Step<'a, T> {
    /// Task `index` may start on `slot`: its future, or `None` to start
    /// nothing more.
    Start {
        /// Its position.
        index: usize,
        /// The slot it gets.
        slot: &'a Slot,
    },
    /// Task `index` ended on `slot`.
    Done {
        /// Its position.
        index: usize,
        /// The slot it had (free again after this step).
        slot: &'a Slot,
        /// What its future gave.
        output: T,
    },
}

/// Runs tasks `0..total` in order, at most one per slot at a time, each
/// as a local task: `step` starts each (or stops the starting) and hears
/// each end, on this task, one step at a time. Returns how many started.
/// The one scheduler of sweeps' targets and a run's tool stages at once.
pub async fn schedule<T: 'static, F: Future<Output = T> + 'static>(
    total: usize,
    mut free: Vec<Slot>,
    mut step: impl FnMut(Step<'_, T>) -> Result<Option<F>, ExpectedError>,
) -> Result<usize, ExpectedError> {
    if free.is_empty() {
        free.push(None);
    }
    // Slots are handed out from the end: reversed, the first goes first.
    free.reverse();
    let (tx, mut rx) = mpsc::unbounded_channel::<(usize, Slot, T)>();
    let (mut next, mut running, mut stopped) = (0, 0usize, false);
    loop {
        while !stopped
            && next < total
            && let Some(slot) = free.pop()
        {
            match step(Step::Start {
                index: next,
                slot: &slot,
            })? {
                Some(task) => {
                    let (tx, index) = (tx.clone(), next);
                    tokio::task::spawn_local(async move {
                        let output = task.await;
                        let _ = tx.send((index, slot, output));
                    });
                    running += 1;
                    next += 1;
                }
                None => {
                    free.push(slot);
                    stopped = true;
                }
            }
        }
        if running == 0 {
            break;
        }
        let Some((index, slot, output)) = rx.recv().await else {
            break;
        };
        running -= 1;
        step(Step::Done {
            index,
            slot: &slot,
            output,
        })?;
        free.push(slot);
    }
    Ok(next)
}
