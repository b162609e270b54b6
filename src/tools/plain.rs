//! The plain run: the program as it is, with `CUDA_LAUNCH_BLOCKING=1`, so
//! the first CUDA error surfaces at the call that caused it. Its stdout and
//! stderr are read for CUDA errors, out-of-memory errors, device asserts and
//! tracebacks.

use cudawatch_model::{Outcome, ProcessEnd, ToolSummary};
use cudawatch_parsers::builder::ReportBuilder;

use super::outcome::{describe_end, process_problem};
use super::{StageCommand, StageContext, StageFiles, StageJudged, StageKind, StageRecord};
use crate::words::plural;

/// The plain run's kind.
pub struct Plain;

/// Set on every stage of a program started by a launcher of several
/// processes (`plan::launcher`): its name, for the report's notes.
pub const LAUNCHER_VAR: &str = "CUDAWATCH_LAUNCHER";

impl StageKind for Plain {
    fn command(&self, ctx: &StageContext<'_>) -> StageCommand {
        let mut command = StageCommand::program(ctx);
        command
            .env
            .push(("CUDA_LAUNCH_BLOCKING".into(), "1".into()));
        command
    }

    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged {
        let mut output = files.read("stderr");
        output.extend(files.read("stdout"));
        use cudawatch_parsers::program;
        let mut sites = program::parse(&output);
        if record.interrupted {
            // cudawatch stopped it with SIGINT (the user's Ctrl-C, passed
            // on): the KeyboardInterrupt it raised is the stop, not a bug.
            sites.retain(|s| !program::is_keyboard_interrupt(s));
        }
        super::ranks::attribute(&mut sites, record);
        let found = builder.plain_sites(&files.rel("stderr"), sites);
        let (outcome, reason) = rule(record, found);
        StageJudged {
            outcome,
            reason,
            summary: ToolSummary::default(),
        }
    }
}

/// The plain run: the program's own exit and what it printed.
pub fn rule(record: &StageRecord, findings: usize) -> (Outcome, String) {
    if let Some(problem) = process_problem(record, "the program", "") {
        return problem;
    }
    let failed = record.end != ProcessEnd::Exited(0);
    match (failed, findings) {
        (_, n) if n > 0 => (
            Outcome::Findings,
            format!(
                "{} printed {}",
                describe_end(record.end),
                plural(n as u64, "error site")
            ),
        ),
        (true, _) => (
            Outcome::TargetFailed,
            format!("the program {}", describe_end(record.end)),
        ),
        (false, _) => (
            Outcome::Clean,
            "exited 0 with no CUDA errors in its output".into(),
        ),
    }
}
