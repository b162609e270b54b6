//! The plain run: the program as it is, with `CUDA_LAUNCH_BLOCKING=1`, so
//! the first CUDA error surfaces at the call that caused it. Its stdout and
//! stderr are read for CUDA errors, out-of-memory errors, device asserts and
//! tracebacks.

use cudawatch_model::{BLOCKED, FindingKind, Outcome, ProcessEnd, Site, ToolSummary};
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
    /// The program itself: what it holds.
    fn gpu_need_mib(&self, _tool: cudawatch_model::Tool, peak: u64) -> u64 {
        peak
    }

    fn relative_cost(&self, _tool: cudawatch_model::Tool) -> u32 {
        2
    }

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
        let output = files.program_output();
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

/// `oom_rank1.py:15` when the plain run's `sites` hold an out-of-memory
/// error at the user's line (or `its failing call` without a line): what
/// the tool stages after it would only meet again, slower.
pub fn out_of_memory_at(sites: &[Site]) -> Option<String> {
    let oom = sites.iter().find(|s| s.kind == FindingKind::OutOfMemory)?;
    Some(place(oom))
}

/// `common.py:34` when the plain run's `sites` hold a collective's timeout
/// (a rank waited in a collective another rank never entered): under any
/// tool the ranks would only wait in it again, each stage until its own
/// limit, which is far longer than the process group's timeout.
pub fn collective_timeout_at(sites: &[Site]) -> Option<String> {
    let hang = sites
        .iter()
        .find(|s| s.kind == FindingKind::CollectiveTimeout)?;
    Some(place(hang))
}

/// `cudaErrorIllegalAddress at train.py:14` when the plain run met a device
/// exception (an invalid or misaligned address, an assert, an illegal
/// instruction: what leaves the context unusable): the fault the core dump
/// stage can place in its kernel.
pub fn device_exception_at(sites: &[Site]) -> Option<String> {
    let fault = sites.iter().find(|s| {
        s.kind == FindingKind::DeviceAssert || crate::judge::consequences::is_sticky(s)
    })?;
    let what = fault.error.as_deref().unwrap_or("device assert");
    Some(format!("{what} at {}", place(fault)))
}

/// `death by signal 6` when the plain run died of a signal a device
/// exception can bring about (an abort after a CUDA error, a fault in a
/// library's error path, a bus error) and printed no message cudawatch
/// recognised: the core dump stage runs then too, and says when the driver
/// wrote nothing (the crash was the host's).
pub fn signal_a_fault_explains(end: ProcessEnd) -> Option<String> {
    match end {
        ProcessEnd::Signaled(signal @ (6 | 7 | 11)) => Some(format!("{SIGNAL_ONLY} {signal}")),
        _ => None,
    }
}

/// How [`signal_a_fault_explains`] begins.
pub const SIGNAL_ONLY: &str = "death by signal";

fn place(site: &Site) -> String {
    site.location
        .as_ref()
        .map_or_else(|| "its failing call".to_string(), |l| l.short())
}

/// The plain run's sites, read from its folder once it has ended (bounded:
/// a flood of output is not read whole).
pub fn sites_in(plain_dir: &std::path::Path) -> Vec<Site> {
    // Read as the stage's own reading reads it, from both ends: the error
    // that ended the program is at its end, however much it printed.
    let output = StageFiles::new(plain_dir, cudawatch_model::Tool::Plain).program_output();
    cudawatch_parsers::program::parse(&output)
}

/// What a sanitizer or ncu stage says when the plain run's failure blocks
/// it (`StageRecord::out_of_memory_at`, `collective_timeout_at`): it is
/// not run.
pub fn blocked_by_plain_failure(command: &mut StageCommand, plain: &StageRecord) {
    if let Some(at) = &plain.out_of_memory_at {
        block(
            command,
            format!(
                "{BLOCKED}the plain run's out-of-memory error at {at}: under the tool the \
                 program would only meet it again, slower (the memory stage says what held the \
                 memory)"
            ),
        );
    }
    blocked_by_hang(command, plain);
}

/// What any tool stage says when the plain run's ranks hung in a
/// collective until the process group's timeout: the memory and CSAN
/// stages too, whose ranks would hang in it again.
pub fn blocked_by_hang(command: &mut StageCommand, plain: &StageRecord) {
    if let Some(at) = &plain.collective_timeout_at {
        block(
            command,
            format!(
                "{BLOCKED}the plain run's collective timeout at {at}: under the tool the ranks \
                 would only wait in the same collective again, until the stage's own limit"
            ),
        );
    }
}

/// What ncu says when the plain run met a device exception (an assert, an
/// illegal address): it would profile the program up to the same fault,
/// which the sanitizers and the core dump place; coalescing is worth its
/// minutes once the program runs to its end (a bad label on rank 1 of two
/// H200s: ncu 138 s of a 167 s check, for library kernels only).
pub fn blocked_by_device_exception(command: &mut StageCommand, plain: &StageRecord) {
    if let Some(what) = &plain.device_exception {
        block(
            command,
            format!(
                "{BLOCKED}the plain run's {what}: profiling would only run the program to \
                 the same fault; coalescing is measured once it runs to its end"
            ),
        );
    }
}

fn block(command: &mut StageCommand, why: String) {
    if command.not_applicable.is_none() && command.cannot_start.is_none() {
        command.not_applicable = Some(why);
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
