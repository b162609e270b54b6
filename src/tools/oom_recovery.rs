//! The oom-recovery stage (opt-in): the memory stage's hook, with the
//! program's usable GPU memory capped to `--oom-recovery-share` of the peak
//! the memory stage measured. Does the program recover from running out?

use cudawatch_model::{Outcome, ProcessEnd, Tool};
use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::memory::HookFacts;

use super::outcome::{describe_end, process_problem};
use super::{StageCommand, StageContext, StageFiles, StageJudged, StageKind, StageRecord, memory};
use crate::words::plural;

/// The oom-recovery stage's kind.
pub struct OomRecovery;

impl StageKind for OomRecovery {
    /// The program capped to a share of its peak, with room for the
    /// allocator's retries.
    fn gpu_need_mib(&self, _tool: Tool, peak: u64) -> u64 {
        super::with_margin(peak, 1.25, 512)
    }

    fn relative_cost(&self, _tool: Tool) -> u32 {
        2
    }

    /// The steps the memory stage measured its peak over.
    fn first_steps(&self, tool: Tool) -> Option<u32> {
        memory::Memory.first_steps(tool)
    }

    fn command(&self, ctx: &StageContext<'_>) -> StageCommand {
        // The memory stage's command, capped.
        let mut command = memory::Memory.command(ctx);
        command
            .env
            .extend(memory::cap_env(ctx.run_dir, ctx.oom_recovery_share));
        command
    }

    fn after_plain(&self, command: &mut StageCommand, plain: &StageRecord) {
        memory::Memory.after_plain(command, plain);
    }

    /// Its cap comes from the memory stage's measured peak.
    fn needs_earlier_stages(&self) -> bool {
        true
    }

    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged {
        let (hook, ooms) = memory::hook_artifacts(files.dir());
        let stderr = String::from_utf8_lossy(&files.read_program("stderr")).into_owned();
        let ended_by_oom = !matches!(record.end, ProcessEnd::Exited(0) | ProcessEnd::NotStarted)
            && stderr.contains("OutOfMemoryError");
        let seen = builder.oom_recovery(
            &files.rel("stderr"),
            &hook.clone().unwrap_or_default(),
            &ooms,
            &stderr,
            ended_by_oom,
        );
        StageJudged::new(rule(record, hook.as_ref(), seen, ended_by_oom))
    }
}

/// The oom-recovery stage: the program under a cap below its measured
/// peak. Recovered (clean) only when it ran out of memory and still
/// finished; never running out proves nothing.
pub fn rule(
    record: &StageRecord,
    hook: Option<&HookFacts>,
    ooms: usize,
    ended_by_oom: bool,
) -> (Outcome, String) {
    use cudawatch_model::size;
    if let Some(why) = &record.not_applicable {
        return (Outcome::Skipped, why.clone());
    }
    if let Some(problem) = process_problem(record, "the program under the memory cap", "") {
        return problem;
    }
    let Some(hook) = hook else {
        return (
            Outcome::Inconclusive,
            format!(
                "cudawatch's Python hook did not report ({}): no cap is known to have applied",
                describe_end(record.end)
            ),
        );
    };
    if !hook.torch_imported || !hook.cuda_initialized {
        return (
            Outcome::Skipped,
            "not applicable: the program never used CUDA through torch".into(),
        );
    }
    let cap = match hook.cap.as_ref() {
        Some(cap) if cap.error.is_none() => cap,
        other => {
            let why = other
                .and_then(|c| c.error.clone())
                .unwrap_or_else(|| "the hook applied none".into());
            return (
                Outcome::Inconclusive,
                format!(
                    "no memory cap ({why}); the oom-recovery stage needs the memory stage's peak: \
                     --stages ...,memory,oom-recovery"
                ),
            );
        }
    };
    let capped = format!(
        "under a cap of {} ({:.0}% of the peak {} allocated)",
        size(cap.bytes.unwrap_or(0)),
        cap.share.unwrap_or(0.0) * 100.0,
        size(cap.peak_allocated.unwrap_or(0))
    );
    match (record.end, ooms) {
        (ProcessEnd::Exited(0), 0) => (
            Outcome::Inconclusive,
            format!(
                "the program never ran out of memory {capped}: recovery was not exercised \
                 (a lower --oom-recovery-share would)"
            ),
        ),
        (ProcessEnd::Exited(0), n) => (
            Outcome::Clean,
            format!(
                "recovered: ran out of memory {} {capped} and still finished",
                plural(n as u64, "time")
            ),
        ),
        (_, _) if ended_by_oom => (
            Outcome::Findings,
            format!("no recovery: the program ended with an out-of-memory error {capped}"),
        ),
        (end, _) => (
            Outcome::Inconclusive,
            format!(
                "the program {} {capped}, not with an out-of-memory error: recovery not shown",
                describe_end(end)
            ),
        ),
    }
}
