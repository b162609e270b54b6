//! What the stage loop tells its listener: the command turns these into
//! progress lines, `stage.json` files and the report (nextest's runner →
//! reporter events).

use cudawatch_model::Tool;

use crate::tools::StageRecord;

/// One event of a run.
pub enum StageEvent<'a> {
    /// The tool stages that follow run this many at once, for this reason.
    Scheduled {
        /// Stages at once (1: one after another).
        at_once: usize,
        /// Why, in words.
        why: &'a str,
    },
    /// A stage is about to start.
    Started {
        /// Its position, from 0.
        index: usize,
        /// How many stages the plan has.
        total: usize,
        /// Its tool.
        tool: Tool,
        /// Its command line, quoted as a shell would show it.
        command: &'a str,
        /// Nothing called for it (`StageCommand::not_needed`): it is not
        /// shown.
        quiet: bool,
    },
    /// A stage ended (its artifacts are complete, ncu's imports included).
    Finished {
        /// Its position, from 0.
        index: usize,
        /// How many stages the plan has.
        total: usize,
        /// What the supervisor saw.
        record: &'a StageRecord,
    },
    /// A running stage did something worth saying before it ends (a
    /// flood stopped it and it runs again without call stacks).
    Noted {
        /// Its position, from 0.
        index: usize,
        /// How many stages the plan has.
        total: usize,
        /// Its tool.
        tool: Tool,
        /// What happened, in words.
        text: &'a str,
    },
    /// The user asked to stop; no further stage starts.
    Interrupted {
        /// The last stage that ran; `None` when the signal came before the
        /// first (while the global-race tool was built).
        after: Option<Tool>,
    },
}
