//! What a running stage has to say before it ends: a flood stopped it and
//! it runs again without call stacks, which can take as long again; it
//! starts again alone. Stage tasks send a notice; the stage loop, while it
//! waits on them, passes it on as a `StageEvent::Noted` (or `Started`), so
//! the progress line says why a stage is still running (the stage's record
//! says it too, once it ends).

use std::cell::RefCell;
use std::future::Future;

use cudawatch_model::Tool;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::events::StageEvent;
use crate::errors::ExpectedError;
use crate::plan::Plan;

/// One notice: which stage, and what happened to it.
pub enum Notice {
    /// A line about it.
    Noted {
        /// Its tool.
        tool: Tool,
        /// What happened.
        text: String,
    },
    /// It starts again (alone).
    Started {
        /// Its position in the plan.
        index: usize,
        /// Its command line and where it runs.
        shown: String,
        /// Nothing called for it: not shown.
        quiet: bool,
    },
}

/// Where stage tasks send their notices (cloned into each task).
#[derive(Clone)]
pub struct Notices(UnboundedSender<Notice>);

impl Notices {
    /// Says `text` of `tool`'s stage. A loop that no longer listens has
    /// ended: the notice is dropped, the stage's record keeps its note.
    pub fn say(&self, tool: Tool, text: String) {
        let _ = self.0.send(Notice::Noted { tool, text });
    }

    /// Says that stage `index` starts again: its command line as `shown`,
    /// not shown at all when `quiet`.
    pub fn started(&self, index: usize, shown: String, quiet: bool) {
        let _ = self.0.send(Notice::Started {
            index,
            shown,
            quiet,
        });
    }
}

/// A sender for the stage tasks and the receiver the loop relays from.
pub fn channel() -> (Notices, UnboundedReceiver<Notice>) {
    let (tx, rx) = unbounded_channel();
    (Notices(tx), rx)
}

/// Awaits `work`, passing each notice that comes meanwhile to `on_event`
/// as it comes. `on_event` is shared with `work` (which calls it at its
/// own steps): on one thread, the two calls never overlap.
pub async fn relaying<T, F>(
    plan: &Plan,
    work: impl Future<Output = Result<T, ExpectedError>>,
    notices: &mut UnboundedReceiver<Notice>,
    on_event: &RefCell<F>,
) -> Result<T, ExpectedError>
where
    F: FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
{
    tokio::pin!(work);
    loop {
        tokio::select! {
            // A notice first: it is about a stage still running.
            biased;
            Some(notice) = notices.recv() => relay(plan, &notice, on_event)?,
            out = &mut work => return out,
        }
    }
}

fn relay<F>(plan: &Plan, notice: &Notice, on_event: &RefCell<F>) -> Result<(), ExpectedError>
where
    F: FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
{
    // Never taken while `work` is inside its own call (see above); were it
    // so, the notice would be dropped rather than the run stopped.
    let Ok(mut on_event) = on_event.try_borrow_mut() else {
        return Ok(());
    };
    let total = plan.stages.len();
    match notice {
        Notice::Noted { tool, text } => {
            let Some(index) = plan.stages.iter().position(|s| s.tool == *tool) else {
                return Ok(());
            };
            on_event(StageEvent::Noted {
                index,
                total,
                tool: *tool,
                text,
            })
        }
        Notice::Started {
            index,
            shown,
            quiet,
        } => {
            let Some(stage) = plan.stages.get(*index) else {
                return Ok(());
            };
            on_event(StageEvent::Started {
                index: *index,
                total,
                tool: stage.tool,
                command: shown,
                quiet: *quiet,
            })
        }
    }
}
