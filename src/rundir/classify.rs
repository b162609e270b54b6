//! Judging each stage: clean, findings, target failed, tool failed,
//! inconclusive or skipped. Pure functions of what the stage left behind, so
//! every rule here is tested without a GPU.
//!
//! The rule that matters most: a stage is clean only when the tool provably
//! ran to the end and checked the program. Exit codes alone prove nothing
//! (racecheck exits 0 with hazards; ncu exits 0 having profiled nothing).

use cudawatch_model::{Outcome, ProcessEnd, Tool};
use cudawatch_parsers::builder::{NcuEvidence, SanitizerEvidence};

use super::records::StageRecord;
use crate::words::plural;

/// Facts common to every stage, from the supervisor.
fn process_problem(record: &StageRecord, tool_name: &str) -> Option<(Outcome, String)> {
    if record.unfinished {
        return Some((
            Outcome::Inconclusive,
            format!(
                "{tool_name} never finished: cudawatch was stopped while it ran (killed, out of \
                 memory, or the machine was lost); what it wrote is kept and read"
            ),
        ));
    }
    if let Some(error) = &record.spawn_error {
        // The lookup's own message already says where it looked and what to do.
        let hint = match record.tool {
            _ if error.contains("; install") => String::new(),
            Tool::Plain | Tool::Csan | Tool::Memory | Tool::OomRecovery => String::new(),
            Tool::Ncu => "; install Nsight Compute or pass --ncu / CUDAWATCH_NCU".into(),
            _ => "; install the CUDA toolkit or pass --compute-sanitizer / CUDAWATCH_COMPUTE_SANITIZER".into(),
        };
        return Some((Outcome::Inconclusive, format!("{error}{hint}")));
    }
    if record.interrupted {
        return Some((
            Outcome::Inconclusive,
            format!(
                "{tool_name} was interrupted after {:.0}s; partial output kept",
                record.seconds
            ),
        ));
    }
    if record.timed_out {
        let flag = if record.tool == Tool::Plain {
            "--plain-timeout"
        } else {
            "--timeout"
        };
        let how = if record.killed {
            "killed (it ignored SIGTERM)"
        } else {
            "stopped"
        };
        return Some((
            Outcome::Inconclusive,
            format!(
                "timed out after {:.0}s and was {how}; raise {flag}",
                record.timeout_seconds
            ),
        ));
    }
    None
}

/// The plain run: the program's own exit and what it printed.
pub fn plain(record: &StageRecord, findings: usize) -> (Outcome, String) {
    if let Some(problem) = process_problem(record, "the program") {
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

/// A compute-sanitizer stage.
pub fn sanitizer(
    record: &StageRecord,
    evidence: &SanitizerEvidence,
    stdout_has_usage: bool,
    output_complete: bool,
) -> (Outcome, String) {
    let tool = record.tool.name();
    if record.unfinished {
        return process_problem(record, tool).expect("unfinished is a problem");
    }
    if record.timed_out && record.spawn_error.is_none() {
        // Incomplete, not empty: what it streamed before the stop is kept.
        // compute-sanitizer does not say which launches it had checked.
        let killed = if record.killed {
            " (it ignored SIGTERM and was killed)"
        } else {
            ""
        };
        let found = match evidence.folded {
            0 => "nothing found before the stop".to_string(),
            n => format!("{} found before the stop kept", plural(n, "record")),
        };
        return (
            Outcome::Inconclusive,
            format!(
                "incomplete: stopped by its timeout after {:.0}s{killed}; {found}; raise --timeout, \
                 or check fewer launches with --sanitizer-launch-count or --sanitizer-kernel",
                record.timeout_seconds
            ),
        );
    }
    if let Some(problem) = process_problem(record, tool) {
        return problem;
    }
    if stdout_has_usage {
        return (
            Outcome::ToolFailed,
            "compute-sanitizer rejected its arguments and printed its usage".into(),
        );
    }
    if crashed_at_teardown(evidence, output_complete) {
        // The program did all its work under the tool (its output is the
        // plain run's, the summary and the XML are complete), then its
        // interpreter crashed while exiting (--leak-check full does this to
        // every PyTorch program tried). The checks count; the leak check
        // does not (the checklist says so).
        // A crash after the last line the program prints looks the same
        // whether it came at teardown or in work that prints nothing, so
        // it never vouches for a clean stage: what was found stands.
        if evidence.folded > 0 {
            return (
                Outcome::Findings,
                format!(
                    "{} reported; the program then crashed under the tool after its last \
                     output line ({})",
                    plural(evidence.folded, "error"),
                    describe_end(record.end)
                ),
            );
        }
        return (
            Outcome::Inconclusive,
            format!(
                "the program printed all its output under {tool}, then crashed ({}): a crash \
                 at teardown cannot be told from one in late work, so nothing is vouched for{}",
                describe_end(record.end),
                if record.command.iter().any(|a| a == "--leak-check") {
                    "; --leak-check full crashes Python at teardown: run without it \
                     (--leak-check auto)"
                } else {
                    ""
                }
            ),
        );
    }
    if let Some(line) = evidence.summary.failures.first() {
        let found = if evidence.folded > 0 {
            format!("{} reported, then ", plural(evidence.folded, "error"))
        } else {
            String::new()
        };
        let why = if line.contains("before first instrumented API call") {
            "the program never initialised CUDA, so nothing was checked".to_string()
        } else if line.contains("didn't terminate successfully") {
            format!("{found}the program crashed under the tool: checked only up to the crash")
        } else {
            format!("compute-sanitizer said: {line}")
        };
        return (Outcome::Inconclusive, why);
    }
    if let Some(broken) = &evidence.xml_broken {
        return (
            Outcome::Inconclusive,
            format!("its XML is cut off ({broken}); kept what was complete"),
        );
    }
    if !evidence.summary.has_closing_line() {
        return (
            Outcome::Inconclusive,
            format!(
                "{tool} printed no summary line, so it did not finish ({})",
                describe_end(record.end)
            ),
        );
    }
    if record.end == ProcessEnd::Exited(255) {
        return (
            Outcome::Inconclusive,
            "compute-sanitizer exited 255: it failed to check the program".into(),
        );
    }
    if let Some(why) = exit_disagrees(record.end, evidence) {
        return (Outcome::Inconclusive, why);
    }
    if evidence.folded > 0 {
        // racecheck counts hazards, errors and warnings; the others errors.
        let found = match (evidence.summary.errors, evidence.summary.racecheck) {
            (_, Some((hazards, errors, warnings))) => format!(
                "{} reported ({}, {})",
                plural(hazards, "hazard"),
                plural(errors, "error"),
                plural(warnings, "warning")
            ),
            (Some(errors), None) => format!("{} reported", plural(errors, "error")),
            (None, None) => format!("{} reported", plural(evidence.folded, "error")),
        };
        return (Outcome::Findings, found);
    }
    if evidence.summary.errors.is_some_and(|e| e > 0) {
        return (
            Outcome::Inconclusive,
            "ERROR SUMMARY counts errors but no record could be read".into(),
        );
    }
    if evidence.xml_records.is_none() {
        return (Outcome::Inconclusive, "no XML report was written".into());
    }
    (
        Outcome::Clean,
        format!(
            "{tool} ran to the end and found nothing{}",
            selected_launches(&record.command)
        ),
    )
}

/// The exit code compute-sanitizer is asked to return when it found errors
/// (`--error-exitcode`, `tools::sanitizer`).
pub const ERRORS_FOUND_EXIT: i32 = 86;

/// Why the tool's end contradicts its summary, if it does. A clean stage
/// needs every witness to agree: the summary line, the exit code
/// (0, or the program's own failure that the tool announced), and no
/// signal. A tool that prints "0 errors" and then dies, or exits with the
/// errors-found code, cannot vouch for anything.
fn exit_disagrees(end: ProcessEnd, evidence: &SanitizerEvidence) -> Option<String> {
    let found = match evidence.folded {
        0 => String::new(),
        n => format!("; the {} it reported first are kept", plural(n, "error")),
    };
    match end {
        ProcessEnd::Exited(0) | ProcessEnd::NotStarted => None,
        ProcessEnd::Signaled(sig) => Some(format!(
            "compute-sanitizer was killed by signal {sig} after its summary: a tool that dies \
             cannot vouch that it checked everything{found}"
        )),
        ProcessEnd::Exited(ERRORS_FOUND_EXIT) if evidence.folded == 0 => Some(format!(
            "compute-sanitizer exited {ERRORS_FOUND_EXIT} (the code cudawatch asks for when \
             errors are found) but no error could be read: its output is incomplete"
        )),
        ProcessEnd::Exited(ERRORS_FOUND_EXIT) => None,
        // The program failed on its own and the tool said so: the tool
        // returns the program's code (the plain run judges the failure).
        ProcessEnd::Exited(_) if evidence.summary.target_failed => None,
        ProcessEnd::Exited(code) => Some(format!(
            "compute-sanitizer exited {code} without saying that the program failed \
             (\"Target application returned an error\"): its exit and its summary disagree{found}"
        )),
    }
}

/// Whether the only thing that went wrong is a crash after the program's
/// work: "did not terminate successfully" is the one tool complaint, the
/// summary line and a complete XML are there, and the program printed all
/// it prints in the plain run.
pub fn crashed_at_teardown(evidence: &SanitizerEvidence, output_complete: bool) -> bool {
    output_complete
        && !evidence.summary.failures.is_empty()
        && evidence
            .summary
            .failures
            .iter()
            .all(|l| l.contains("didn't terminate successfully") || l.contains("Unified Memory"))
        && evidence.summary.has_closing_line()
        && evidence.xml_records.is_some()
        && evidence.xml_broken.is_none()
}

/// Whether a stage's stdout holds every line the plain run printed (the
/// program got to the end of its work under the tool).
pub fn output_complete(plain_stdout: &[u8], stage_stdout: &[u8]) -> bool {
    let stage = String::from_utf8_lossy(stage_stdout);
    let stage_lines: std::collections::HashSet<&str> = stage.lines().map(str::trim).collect();
    let plain = String::from_utf8_lossy(plain_stdout);
    let mut plain_lines = plain
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .peekable();
    plain_lines.peek().is_some() && plain_lines.all(|l| stage_lines.contains(l))
}

/// ` (only the launches selected by --launch-count 5)` when the user
/// narrowed the check: a clean stage then vouches for those launches only.
fn selected_launches(command: &[String]) -> String {
    let flags: Vec<String> = command
        .windows(2)
        .filter(|w| ["--launch-count", "--launch-skip", "--kernel-name"].contains(&w[0].as_str()))
        .map(|w| format!("{} {}", w[0], w[1]))
        .collect();
    if flags.is_empty() {
        String::new()
    } else {
        format!(" (only the launches selected by {})", flags.join(" "))
    }
}

pub use cudawatch_parsers::memory::HookFacts;

/// What CSAN cannot see, said with every verdict of its stage.
const CSAN_BLIND_SPOTS: &str = "CSAN sees PyTorch's operators on PyTorch's streams: not the \
     arguments of custom kernels (CuPy, Triton, extensions), nor streams PyTorch does not know";

/// The CSAN stage: the program run with `TORCH_CUDA_SANITIZER=1`. CSAN
/// prints nothing when it finds nothing, so silence is clean only when the
/// hook saw, at the program's normal exit, that CSAN was on.
pub fn csan(record: &StageRecord, races: usize, hook: Option<&HookFacts>) -> (Outcome, String) {
    if let Some(why) = &record.not_applicable {
        return (Outcome::Skipped, why.clone());
    }
    if let Some(problem) = process_problem(record, "the program under CSAN") {
        return problem;
    }
    if races > 0 {
        return (
            Outcome::Findings,
            format!(
                "CSAN reported {} ({CSAN_BLIND_SPOTS})",
                plural(races as u64, "race site")
            ),
        );
    }
    let Some(hook) = hook else {
        return (
            Outcome::Inconclusive,
            format!(
                "cudawatch's Python hook did not report ({}; CUDAWATCH_NO_HOOK set, a Python it \
                 cannot run in, or no normal exit), so CSAN's silence proves nothing",
                describe_end(record.end)
            ),
        );
    };
    if !hook.torch_imported {
        return (
            Outcome::Skipped,
            "not applicable: the program never imported torch, and CSAN watches PyTorch's tensors"
                .into(),
        );
    }
    let torch = hook.torch_version.as_deref().unwrap_or("?");
    match hook.csan_enabled {
        Some(true) => {}
        Some(false) => {
            return (
                Outcome::Inconclusive,
                format!("torch {torch} ignored TORCH_CUDA_SANITIZER=1: CSAN was off"),
            );
        }
        None => {
            return (
                Outcome::Inconclusive,
                format!(
                    "torch {torch} has no CSAN that cudawatch can see (torch.cuda._sanitizer): \
                     nothing was checked"
                ),
            );
        }
    }
    if record.end != ProcessEnd::Exited(0) {
        return (
            Outcome::Inconclusive,
            format!(
                "the program {} under CSAN with no race reported: checked only up to there",
                describe_end(record.end)
            ),
        );
    }
    (
        Outcome::Clean,
        format!(
            "CSAN (torch {torch}) watched the whole run and reported no race ({CSAN_BLIND_SPOTS})"
        ),
    )
}

/// The memory stage: the program run with cudawatch's hook watching
/// PyTorch's allocator. It vouches only when the hook reported at exit
/// with the allocator's history on; an out-of-memory error or memory that
/// grows step over step are its findings.
pub fn memory(
    record: &StageRecord,
    hook: Option<&HookFacts>,
    memory: Option<&cudawatch_model::MemoryReport>,
) -> (Outcome, String) {
    use cudawatch_model::size;
    if let Some(why) = &record.not_applicable {
        return (Outcome::Skipped, why.clone());
    }
    if let Some(problem) = process_problem(record, "the program under the memory hook") {
        return problem;
    }
    // The OOM files are written before the exception unwinds: they stand
    // even when the program died before the hook's exit report.
    if let Some(oom) = memory.and_then(|m| m.ooms.first()) {
        let at = oom
            .location
            .as_ref()
            .map_or(oom.origin.clone(), |l| l.to_string());
        let top = oom.held.first().map_or(String::new(), |h| {
            format!(
                "; most held by {} ({})",
                h.location
                    .as_ref()
                    .map_or(h.origin.clone(), |l| l.to_string()),
                size(h.bytes)
            )
        });
        return (
            Outcome::Findings,
            format!(
                "out of memory at {at}: asked {}, {} allocated, {} reserved{top}",
                size(oom.request),
                size(oom.allocated),
                size(oom.reserved)
            ),
        );
    }
    let Some(hook) = hook else {
        return (
            Outcome::Inconclusive,
            format!(
                "cudawatch's Python hook did not report ({}; CUDAWATCH_NO_HOOK set, a Python it \
                 cannot run in, or no normal exit): nothing about memory is known",
                describe_end(record.end)
            ),
        );
    };
    if !hook.torch_imported {
        return (
            Outcome::Skipped,
            "not applicable: the program never imported torch".into(),
        );
    }
    if !hook.cuda_initialized {
        return (
            Outcome::Skipped,
            "not applicable: the program imported torch but never used CUDA".into(),
        );
    }
    let torch = hook.torch_version.as_deref().unwrap_or("?");
    if hook.history != Some(true) || hook.oom_observer != Some(true) {
        return (
            Outcome::Inconclusive,
            format!(
                "torch {torch} would not record its allocator's history ({}): nothing about \
                 memory is known",
                hook.errors.join("; ")
            ),
        );
    }
    if let Some(growth) = memory.and_then(|m| m.growth.as_ref()) {
        return (
            Outcome::Findings,
            format!(
                "memory still allocated after each optimizer step grows by {} a step (steps {}-{})",
                size(growth.bytes_per_step),
                growth.from_step,
                growth.to_step
            ),
        );
    }
    if record.end != ProcessEnd::Exited(0) {
        return (
            Outcome::Inconclusive,
            format!(
                "the program {} under the memory hook: memory watched only up to there",
                describe_end(record.end)
            ),
        );
    }
    let peak = memory.and_then(|m| m.peak).map_or(String::new(), |p| {
        format!(
            "peak {} allocated, {} reserved of {}; ",
            size(p.allocated),
            size(p.reserved),
            size(p.device_total)
        )
    });
    let steps = match hook.steps {
        0 => "no optimizer step, so growth was not judged".to_string(),
        n if n < 7 => format!(
            "{} too few to judge growth (7 needed)",
            plural(n, "optimizer step")
        ),
        n => format!("no growth over {}", plural(n, "optimizer step")),
    };
    (
        Outcome::Clean,
        format!("torch {torch}'s allocator watched the whole run: {peak}{steps}"),
    )
}

/// The oom-recovery stage: the program under a cap below its measured
/// peak. Recovered (clean) only when it ran out of memory and still
/// finished; never running out proves nothing.
pub fn oom_recovery(
    record: &StageRecord,
    hook: Option<&HookFacts>,
    ooms: usize,
    ended_by_oom: bool,
) -> (Outcome, String) {
    use cudawatch_model::size;
    if let Some(why) = &record.not_applicable {
        return (Outcome::Skipped, why.clone());
    }
    if let Some(problem) = process_problem(record, "the program under the memory cap") {
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

/// The ncu stage.
pub fn ncu(
    record: &StageRecord,
    evidence: &NcuEvidence,
    uncoalesced: usize,
    profile_written: bool,
) -> (Outcome, String) {
    if let Some(problem) = process_problem(record, "ncu") {
        return problem;
    }
    // A launch ncu could not profile (a faulting kernel gives "LaunchFailed")
    // was not measured, so the stage cannot vouch for it.
    if let Some(line) = evidence.summary.failures.first() {
        let hint = if line.contains("ERR_NVGPUCTRPERM") {
            ": the GPU's performance counters need admin rights (NVreg_RestrictProfilingToAdminUsers=0)"
        } else if line.contains("LaunchFailed") {
            " (a kernel that faults cannot be profiled; fix the memory errors first)"
        } else {
            ""
        };
        return (Outcome::Inconclusive, format!("ncu said: {line}{hint}"));
    }
    if evidence.summary.no_kernels_profiled {
        return (
            Outcome::Inconclusive,
            "ncu profiled no kernels (it exits 0 all the same); check --ncu-kernel".into(),
        );
    }
    if !profile_written {
        return (
            Outcome::Inconclusive,
            format!("ncu wrote no report ({})", describe_end(record.end)),
        );
    }
    if let Some((file, error)) = evidence.errors.first() {
        return (
            Outcome::ToolFailed,
            format!("could not read {file}: {error}"),
        );
    }
    if let Some((page, end)) = record
        .imports
        .iter()
        .find(|(_, end)| *end != ProcessEnd::Exited(0))
    {
        return (
            Outcome::ToolFailed,
            format!(
                "ncu --import writing {page} {}: its page cannot be trusted",
                describe_end(*end)
            ),
        );
    }
    if evidence.kernels == 0 {
        return (
            Outcome::Inconclusive,
            "the profile holds no kernel launches".into(),
        );
    }
    if evidence.measured == 0 {
        return (
            Outcome::Inconclusive,
            format!(
                "none of the {} profiled launches has a coalescing figure (no sector metrics in the raw page)",
                evidence.kernels
            ),
        );
    }
    if uncoalesced > 0 {
        return (
            Outcome::Findings,
            format!(
                "{uncoalesced} of {} profiled launches have uncoalesced accesses",
                evidence.kernels
            ),
        );
    }
    (
        Outcome::Clean,
        format!(
            "{} profiled, all coalesced",
            plural(evidence.kernels as u64, "launch")
        ),
    )
}

fn describe_end(end: ProcessEnd) -> String {
    match end {
        ProcessEnd::Exited(0) => "exited 0".into(),
        ProcessEnd::Exited(code) => format!("exited {code}"),
        ProcessEnd::Signaled(sig) => format!("was killed by signal {sig}"),
        ProcessEnd::NotStarted => "never started".into(),
    }
}

#[cfg(test)]
mod tests {
    //! Every rule above, one row each: what the stage left behind, and the
    //! outcome and words a user gets.

    use super::*;
    use cudawatch_model::ToolSummary;
    use cudawatch_parsers::error::{ParseError, ParseErrorKind};

    fn record(tool: Tool, end: ProcessEnd) -> StageRecord {
        StageRecord {
            tool,
            command: Vec::new(),
            env: Vec::new(),
            end,
            seconds: 2.0,
            timeout_seconds: 120.0,
            timed_out: false,
            interrupted: false,
            killed: false,
            left_behind: false,
            spawn_error: None,
            unfinished: false,
            not_applicable: None,
            gpu_memory_mib: None,
            imports: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn summary(errors: Option<u64>) -> ToolSummary {
        ToolSummary {
            errors,
            ..ToolSummary::default()
        }
    }

    fn evidence(summary: ToolSummary, xml_records: Option<u64>, folded: u64) -> SanitizerEvidence {
        SanitizerEvidence {
            summary,
            xml_records,
            folded,
            ..SanitizerEvidence::default()
        }
    }

    #[test]
    fn sanitizer_stage_rules() {
        let ok = record(Tool::Memcheck, ProcessEnd::Exited(0));
        let failing = |line: &str| ToolSummary {
            failures: vec![line.to_string()],
            ..summary(Some(0))
        };
        let truncated = SanitizerEvidence {
            xml_broken: Some(ParseError {
                kind: ParseErrorKind::Truncated,
                offset: 4096,
                path: "ComputeSanitizerOutput/record[3]".into(),
            }),
            ..evidence(summary(Some(3)), Some(2), 2)
        };
        let timed_out = StageRecord {
            timed_out: true,
            ..ok.clone()
        };
        let spawn = StageRecord {
            spawn_error: Some("cannot run compute-sanitizer: No such file or directory".into()),
            end: ProcessEnd::NotStarted,
            ..ok.clone()
        };
        let rows: Vec<(&str, StageRecord, SanitizerEvidence, bool, Outcome, &str)> = vec![
            (
                "clean",
                ok.clone(),
                evidence(summary(Some(0)), Some(0), 0),
                false,
                Outcome::Clean,
                "ran to the end",
            ),
            (
                "records",
                ok.clone(),
                evidence(summary(Some(26)), Some(26), 26),
                false,
                Outcome::Findings,
                "26 errors",
            ),
            (
                "usage printed",
                ok.clone(),
                evidence(summary(None), None, 0),
                true,
                Outcome::ToolFailed,
                "printed its usage",
            ),
            (
                "summary without records",
                ok.clone(),
                evidence(summary(Some(5)), Some(0), 0),
                false,
                Outcome::Inconclusive,
                "no record could be read",
            ),
            (
                "exit 255 after a summary",
                record(Tool::Memcheck, ProcessEnd::Exited(255)),
                evidence(summary(Some(0)), Some(0), 0),
                false,
                Outcome::Inconclusive,
                "exited 255",
            ),
            (
                "no XML",
                ok.clone(),
                evidence(summary(Some(0)), None, 0),
                false,
                Outcome::Inconclusive,
                "no XML report",
            ),
            (
                "no summary line",
                record(Tool::Memcheck, ProcessEnd::Signaled(11)),
                evidence(summary(None), Some(0), 0),
                false,
                Outcome::Inconclusive,
                "printed no summary line",
            ),
            (
                "XML cut off",
                ok.clone(),
                truncated,
                false,
                Outcome::Inconclusive,
                "XML is cut off",
            ),
            (
                "never initialised CUDA",
                ok.clone(),
                evidence(
                    failing("Target application terminated before first instrumented API call"),
                    None,
                    0,
                ),
                false,
                Outcome::Inconclusive,
                "never initialised CUDA",
            ),
            (
                "crashed under the tool",
                ok.clone(),
                evidence(
                    failing("Error: process didn't terminate successfully"),
                    Some(1),
                    1,
                ),
                false,
                Outcome::Inconclusive,
                "crashed under the tool",
            ),
            (
                "timed out",
                timed_out.clone(),
                evidence(summary(None), None, 0),
                false,
                Outcome::Inconclusive,
                "incomplete: stopped by its timeout after 120s; nothing found",
            ),
            (
                "timed out with records",
                timed_out,
                evidence(summary(None), None, 3),
                false,
                Outcome::Inconclusive,
                "3 records found before the stop kept",
            ),
            (
                "tool missing",
                spawn,
                evidence(summary(None), None, 0),
                false,
                Outcome::Inconclusive,
                "install the CUDA toolkit",
            ),
        ];
        for (name, record, evidence, usage, outcome, words) in rows {
            let (got, reason) = sanitizer(&record, &evidence, usage, false);
            assert_eq!(got, outcome, "{name}: {reason}");
            assert!(reason.contains(words), "{name}: {reason:?} lacks {words:?}");
        }
    }

    #[test]
    fn a_summary_of_no_errors_is_clean_only_when_the_exit_agrees() {
        let zero = || evidence(summary(Some(0)), Some(0), 0);
        let target_failed = SanitizerEvidence {
            summary: ToolSummary {
                target_failed: true,
                ..summary(Some(0))
            },
            ..zero()
        };
        let rows: Vec<(&str, ProcessEnd, SanitizerEvidence, Outcome, &str)> = vec![
            (
                "exit 0",
                ProcessEnd::Exited(0),
                zero(),
                Outcome::Clean,
                "found nothing",
            ),
            (
                "killed by SIGSEGV after the summary",
                ProcessEnd::Signaled(11),
                zero(),
                Outcome::Inconclusive,
                "killed by signal 11",
            ),
            (
                "the errors-found code with no error",
                ProcessEnd::Exited(86),
                zero(),
                Outcome::Inconclusive,
                "exited 86",
            ),
            (
                "exit 1 without the program failing",
                ProcessEnd::Exited(1),
                zero(),
                Outcome::Inconclusive,
                "disagree",
            ),
            (
                "the program's own failure, announced",
                ProcessEnd::Exited(1),
                target_failed,
                Outcome::Clean,
                "found nothing",
            ),
            (
                "errors found, code 86",
                ProcessEnd::Exited(86),
                evidence(summary(Some(2)), Some(2), 2),
                Outcome::Findings,
                "2 errors",
            ),
            (
                "errors found, then killed",
                ProcessEnd::Signaled(9),
                evidence(summary(Some(2)), Some(2), 2),
                Outcome::Inconclusive,
                "the 2 errors it reported first are kept",
            ),
        ];
        for (name, end, evidence, outcome, words) in rows {
            let (got, reason) = sanitizer(&record(Tool::Memcheck, end), &evidence, false, false);
            assert_eq!(got, outcome, "{name}: {reason}");
            assert!(reason.contains(words), "{name}: {reason:?} lacks {words:?}");
        }
    }

    #[test]
    fn a_crash_after_the_last_line_never_vouches_for_a_clean_stage() {
        // Before: "checked the program to its end; then crashed at
        // teardown", clean, although a crash in late work that prints
        // nothing looks exactly the same.
        let ok = record(Tool::Memcheck, ProcessEnd::Exited(7));
        let crashed = evidence(
            ToolSummary {
                failures: vec!["Error: process didn't terminate successfully".into()],
                ..summary(Some(0))
            },
            Some(0),
            0,
        );
        let (outcome, reason) = sanitizer(&ok, &crashed, false, true);
        assert_eq!(outcome, Outcome::Inconclusive, "{reason}");
        assert!(reason.contains("cannot be told"), "{reason}");
        let found = evidence(crashed.summary.clone(), Some(2), 2);
        let (outcome, reason) = sanitizer(&ok, &found, false, true);
        assert_eq!(outcome, Outcome::Findings, "{reason}");
        assert!(reason.contains("2 errors reported"), "{reason}");
        let (outcome, reason) = sanitizer(&ok, &crashed, false, false);
        assert_eq!(outcome, Outcome::Inconclusive, "{reason}");
        assert!(reason.contains("checked only up to the crash"), "{reason}");
        let cut = SanitizerEvidence {
            xml_records: None,
            ..crashed
        };
        assert_eq!(sanitizer(&ok, &cut, false, true).0, Outcome::Inconclusive);
    }

    #[test]
    fn the_output_is_complete_when_every_plain_line_is_there() {
        let tool = b"========= COMPUTE-SANITIZER\nloss 2.2979\nstep 2\n========= ERROR SUMMARY: 0 errors\n";
        assert!(output_complete(b"loss 2.2979\nstep 2\n", tool));
        assert!(!output_complete(b"loss 2.2979\nstep 2\nstep 3\n", tool));
        assert!(
            !output_complete(b"", tool),
            "nothing to compare: not proven"
        );
    }

    #[test]
    fn a_clean_stage_that_checked_only_some_launches_says_so() {
        let narrowed = StageRecord {
            command: [
                "compute-sanitizer",
                "--tool",
                "memcheck",
                "--launch-count",
                "5",
                "--kernel-name",
                "kns=gemm",
                "./app",
            ]
            .map(String::from)
            .to_vec(),
            ..record(Tool::Memcheck, ProcessEnd::Exited(0))
        };
        let (outcome, reason) = sanitizer(
            &narrowed,
            &evidence(summary(Some(0)), Some(0), 0),
            false,
            false,
        );
        assert_eq!(outcome, Outcome::Clean);
        assert!(
            reason.ends_with(
                "(only the launches selected by --launch-count 5 --kernel-name kns=gemm)"
            ),
            "{reason}"
        );
    }

    #[test]
    fn ncu_stage_rules() {
        let ok = record(Tool::Ncu, ProcessEnd::Exited(0));
        let with = |summary: ToolSummary, kernels: usize| NcuEvidence {
            summary,
            kernels,
            measured: kernels,
            errors: Vec::new(),
        };
        let failing = |line: &str| ToolSummary {
            failures: vec![line.to_string()],
            ..ToolSummary::default()
        };
        let unreadable = NcuEvidence {
            errors: vec![(
                "ncu/raw.csv".into(),
                ParseError {
                    kind: ParseErrorKind::Csv("bad row".into()),
                    offset: 10,
                    path: "row 2".into(),
                },
            )],
            ..with(ToolSummary::default(), 0)
        };
        let no_kernels = ToolSummary {
            no_kernels_profiled: true,
            ..ToolSummary::default()
        };
        let rows: Vec<(&str, NcuEvidence, usize, bool, Outcome, &str)> = vec![
            (
                "coalesced",
                with(ToolSummary::default(), 3),
                0,
                true,
                Outcome::Clean,
                "3 launches profiled",
            ),
            (
                "uncoalesced",
                with(ToolSummary::default(), 3),
                1,
                true,
                Outcome::Findings,
                "1 of 3",
            ),
            (
                "no kernels profiled",
                with(no_kernels, 0),
                0,
                true,
                Outcome::Inconclusive,
                "profiled no kernels",
            ),
            (
                "wrote no report",
                with(ToolSummary::default(), 0),
                0,
                false,
                Outcome::Inconclusive,
                "wrote no report",
            ),
            (
                "no launches in the profile",
                with(ToolSummary::default(), 0),
                0,
                true,
                Outcome::Inconclusive,
                "no kernel launches",
            ),
            (
                "unreadable page",
                unreadable,
                0,
                true,
                Outcome::ToolFailed,
                "could not read ncu/raw.csv",
            ),
            (
                "counters need permission",
                with(
                    failing("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission"),
                    0,
                ),
                0,
                false,
                Outcome::Inconclusive,
                "need admin rights",
            ),
            (
                "launch failed",
                with(failing("==ERROR== LaunchFailed"), 0),
                0,
                true,
                Outcome::Inconclusive,
                "fix the memory errors first",
            ),
            (
                "no coalescing metric in the raw page",
                NcuEvidence {
                    measured: 0,
                    ..with(ToolSummary::default(), 3)
                },
                0,
                true,
                Outcome::Inconclusive,
                "none of the 3 profiled launches has a coalescing figure",
            ),
        ];
        for (name, evidence, uncoalesced, profile, outcome, words) in rows {
            let (got, reason) = ncu(&ok, &evidence, uncoalesced, profile);
            assert_eq!(got, outcome, "{name}: {reason}");
            assert!(reason.contains(words), "{name}: {reason:?} lacks {words:?}");
        }
    }

    #[test]
    fn an_ncu_import_that_failed_leaves_the_stage_untrusted() {
        let failed = StageRecord {
            imports: vec![
                ("raw.csv".into(), ProcessEnd::Exited(0)),
                ("details.csv".into(), ProcessEnd::Exited(1)),
            ],
            ..record(Tool::Ncu, ProcessEnd::Exited(0))
        };
        let evidence = NcuEvidence {
            summary: ToolSummary::default(),
            kernels: 2,
            measured: 2,
            errors: Vec::new(),
        };
        let (outcome, reason) = ncu(&failed, &evidence, 0, true);
        assert_eq!(outcome, Outcome::ToolFailed);
        assert!(reason.contains("details.csv exited 1"), "{reason}");
    }

    #[test]
    fn plain_run_rules() {
        let ok = record(Tool::Plain, ProcessEnd::Exited(0));
        assert_eq!(plain(&ok, 0).0, Outcome::Clean);
        assert_eq!(plain(&ok, 2).0, Outcome::Findings);
        let crashed = record(Tool::Plain, ProcessEnd::Signaled(11));
        let (outcome, reason) = plain(&crashed, 0);
        assert_eq!(outcome, Outcome::TargetFailed);
        assert!(reason.contains("killed by signal 11"), "{reason}");
        let slow = StageRecord {
            timed_out: true,
            ..ok
        };
        let (outcome, reason) = plain(&slow, 0);
        assert_eq!(outcome, Outcome::Inconclusive);
        assert!(reason.contains("raise --plain-timeout"), "{reason}");
    }
}
