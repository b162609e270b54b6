//! Many children at once, one per slot (a GPU): a sweep's targets, or a
//! run's tool stages under `--parallel-stages`. Each child is supervised
//! by its own `select!` loop ([`supervise`]) on a local task; this loop
//! hands out slots, starts what fits, and reports to the caller as each
//! ends. When the user stops or the budget runs out, nothing new starts:
//! what runs is stopped by its own loop (the signal forwarded, or its
//! deadline), and what never started is reported as such.

use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::child::{ChildEnd, ChildSpec, supervise};
use super::signals::{Shutdown, Signals};
use crate::errors::ExpectedError;

/// Where a child runs: `Some(gpu)` pins it with `CUDA_VISIBLE_DEVICES`;
/// `None` leaves the environment alone (no GPU known).
pub type Slot = Option<String>;

/// One child to run, with its own time limit.
#[derive(Debug, Clone)]
pub struct Job {
    /// What to run; its `timeout` is cut to the budget left when it starts.
    pub spec: ChildSpec,
}

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
pub fn run(
    jobs: Vec<Job>,
    slots: Vec<Slot>,
    deadline: Option<Instant>,
    on_event: impl FnMut(PoolEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<PoolEnd, ExpectedError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ExpectedError::Usage(format!("cannot start the async runtime: {e}")))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, run_jobs(jobs, slots, deadline, on_event))
}

async fn run_jobs(
    jobs: Vec<Job>,
    mut free: Vec<Slot>,
    deadline: Option<Instant>,
    mut on_event: impl FnMut(PoolEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<PoolEnd, ExpectedError> {
    if free.is_empty() {
        free.push(None);
    }
    // Slots are handed out from the end: reversed, GPU 0 goes first.
    free.reverse();
    let signals = Signals::install();
    let (tx, mut rx) = mpsc::unbounded_channel::<(usize, Slot, ChildEnd, bool)>();
    let mut pending = jobs.into_iter().enumerate().peekable();
    let mut running = 0usize;
    let mut end = PoolEnd::Completed;
    loop {
        if end == PoolEnd::Completed && signals.shutdown() != Shutdown::None {
            end = PoolEnd::Interrupted;
        }
        while end == PoolEnd::Completed && pending.peek().is_some() && !free.is_empty() {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l < MIN_USEFUL) {
                end = PoolEnd::BudgetSpent;
                break;
            }
            let (index, job) = pending.next().expect("peeked");
            let slot = free.pop().expect("checked");
            let mut spec = job.spec;
            let by_budget = left.is_some_and(|l| l < spec.timeout);
            if let Some(l) = left {
                spec.timeout = spec.timeout.min(l);
            }
            if let Some(gpu) = &slot {
                spec.env.push(("CUDA_VISIBLE_DEVICES".into(), gpu.clone()));
            }
            on_event(PoolEvent::Started { index, slot: &slot })?;
            let tx = tx.clone();
            let spec = Rc::new(spec);
            tokio::task::spawn_local(async move {
                let mut signals = Signals::install();
                let end = supervise(&spec, &mut signals, |_| {}).await;
                let _ = tx.send((index, slot, end, by_budget));
            });
            running += 1;
        }
        if running == 0 {
            break;
        }
        let Some((index, slot, child_end, budget_cut)) = rx.recv().await else {
            break;
        };
        running -= 1;
        let by_budget = budget_cut && child_end.timed_out;
        on_event(PoolEvent::Finished {
            index,
            slot: &slot,
            end: &child_end,
            by_budget,
        })?;
        if by_budget {
            end = PoolEnd::BudgetSpent;
        }
        free.push(slot);
    }
    let why = match end {
        PoolEnd::Interrupted => NotStartedWhy::Interrupted,
        _ => NotStartedWhy::Budget,
    };
    for (index, _) in pending {
        on_event(PoolEvent::NotStarted { index, why })?;
    }
    Ok(end)
}
