//! When a compute-sanitizer stage is clean: its summary line, its exit
//! code and its XML must all agree, and the program must have got to the
//! end of its work under the tool.

use cudawatch_model::{Outcome, ProcessEnd, Tool};
use cudawatch_parsers::builder::SanitizerEvidence;

use super::launches::{FIRST_BLOCK_OPTION, launch_selection};
use crate::tools::StageRecord;
use crate::tools::outcome::{describe_end, process_problem};
use crate::words::plural;

/// The remedy when compute-sanitizer is nowhere.
pub const MISSING: &str =
    "; install the CUDA toolkit or pass --compute-sanitizer / CUDAWATCH_COMPUTE_SANITIZER";

/// A compute-sanitizer stage.
// Over 100 lines on purpose: the stage's rules in priority order, the first
// that applies deciding; kept in one place so that the order can be read and
// checked.
pub fn rule(
    record: &StageRecord,
    evidence: &SanitizerEvidence,
    stdout_has_usage: bool,
    output_complete: bool,
) -> (Outcome, String) {
    let tool = record.tool.name();
    if record.unfinished {
        return process_problem(record, tool, MISSING).expect("unfinished is a problem");
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
    if let Some(problem) = process_problem(record, tool, MISSING) {
        return problem;
    }
    if stdout_has_usage {
        // The one option cudawatch itself adds that older releases lack
        // (2025.3.1 prints its usage and "unrecognised option", exit 255:
        // sample-reports/beyond/racecheck_blocks/refusal.*).
        let newer = if record.command.iter().any(|a| a == FIRST_BLOCK_OPTION) {
            format!(
                ": --racecheck-blocks first needs compute-sanitizer 2026.3 or newer ({FIRST_BLOCK_OPTION}); \
                 pass one with --compute-sanitizer PATH, or leave --racecheck-blocks out"
            )
        } else {
            String::new()
        };
        return (
            Outcome::ToolFailed,
            format!("compute-sanitizer rejected its arguments and printed its usage{newer}"),
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
    if let Some(starved) = tool_out_of_memory(record, evidence) {
        return (Outcome::Inconclusive, starved);
    }
    if let Some(line) = evidence.summary.failures.first() {
        let found = if evidence.folded > 0 {
            format!("{} reported, then ", plural(evidence.folded, "error"))
        } else {
            String::new()
        };
        let unhandled = evidence
            .summary
            .failures
            .iter()
            .any(|l| l.contains(UNHANDLED_FAULT));
        let why = if line.contains("before first instrumented API call") {
            "the program never initialised CUDA, so nothing was checked".to_string()
        } else if unhandled {
            format!("{found}{}", unhandled_fault(&record.command))
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
                "{tool} printed no summary line, so it did not finish ({}){}",
                describe_end(record.end),
                cut_records(evidence.summary.cut_records)
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
            (Some(errors), None) => match dropped(evidence, errors) {
                Some(found) => found,
                None => format!("{} reported", plural(errors, "error")),
            },
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
    // The program stopped early under the tool (a device assert, its own
    // error exit): the tool checked the launches up to there and nothing
    // after, so it cannot vouch for the program. When that failure is a
    // finding already (the plain run's assert), the judge calls the stage
    // blocked by it.
    if evidence.summary.target_failed {
        return (
            Outcome::Inconclusive,
            format!(
                "the program failed under {tool} ({}): checked only up to its failure",
                describe_end(record.end)
            ),
        );
    }
    (
        Outcome::Clean,
        format!(
            "{tool} ran to the end and found nothing{}",
            selected_launches(record.tool, &record.command)
        ),
    )
}

/// The tool's total when it dropped records (its error buffer overflowed,
/// `--show-backtrace no`): its ERROR SUMMARY counts the records it kept
/// and one warning per launch that overflowed, and "N errors were skipped"
/// the rest. Every launch kept its first records, so no launch with an
/// error goes unseen; a site's count is then a lower bound.
fn dropped(evidence: &SanitizerEvidence, errors: u64) -> Option<String> {
    let launches = evidence.overflowed_launches;
    let skipped = evidence.summary.skipped.unwrap_or(0);
    if launches == 0 && skipped == 0 {
        return None;
    }
    let kept = errors.saturating_sub(launches);
    Some(format!(
        "{} reported by the tool: {kept} kept and {skipped} skipped when its error buffer \
         overflowed in {} (each keeps its first records); site counts are lower bounds",
        plural(kept + skipped, "error"),
        plural(launches, "launch")
    ))
}

/// `; its last record was cut off mid-way and is not counted` when the
/// text ended inside a record.
pub fn cut_records(n: u64) -> String {
    match n {
        0 => String::new(),
        _ => "; its last record was cut off mid-way and is not counted as a finding".into(),
    }
}

/// The exit code compute-sanitizer is asked to return when it found errors
/// (`--error-exitcode`, `argv.rs`).
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

/// compute-sanitizer's own allocation failed ("Internal Sanitizer Error:
/// ... didn't track the launch ... Unable to allocate enough memory"): the
/// launches it names went unchecked. The stage is inconclusive with the
/// tool's cause and what held the GPU's memory, never a finding (issue 21,
/// sample-reports/beyond/crowded). `None` for any other stage.
fn tool_out_of_memory(record: &StageRecord, evidence: &SanitizerEvidence) -> Option<String> {
    const SIGN: &str = "Unable to allocate enough memory";
    let line = evidence
        .summary
        .failures
        .iter()
        .find(|f| f.contains(SIGN))?;
    let launches: u64 = evidence
        .tool_errors
        .iter()
        .filter(|(m, _)| m.contains(SIGN))
        .map(|(_, n)| n)
        .sum();
    let kernel = line
        .split("while launching ")
        .nth(1)
        .and_then(|rest| rest.split(" and didn't").next())
        .map(|k| format!(" of {k}"))
        .unwrap_or_default();
    let untracked = if launches > 0 {
        format!("did not track {}{kernel}", plural(launches, "launch"))
    } else {
        format!("did not track every launch{kernel}")
    };
    let mut holders: Vec<&crate::tools::OtherProcess> = record.gpu_others.iter().collect();
    holders.sort_by_key(|o| std::cmp::Reverse(o.mib));
    let held = if holders.is_empty() {
        "free GPU memory for the tool (it needs more than the program alone) and run it again"
            .to_string()
    } else {
        let named: Vec<String> = holders
            .iter()
            .take(3)
            .map(|o| {
                let command = if o.command.is_empty() {
                    "exited".to_string()
                } else {
                    o.command.clone()
                };
                format!("pid {} ({command}) {} MiB", o.pid, o.mib)
            })
            .collect();
        format!(
            "other processes held the GPU's memory: {}; run it again when they are done",
            named.join(", ")
        )
    };
    Some(format!(
        "{} ran out of GPU memory for its own bookkeeping and {untracked}, so errors in them \
         would go unseen; {held}",
        record.tool.name()
    ))
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
fn selected_launches(tool: Tool, command: &[String]) -> String {
    // the stages' own library filter (launches::leaves_out_libraries),
    // and the names it kept checked for the program's own kernels.
    let ours = |flag: &str| {
        flag.strip_prefix("--kernel-name-exclude regex=")
            .and_then(crate::tools::library_kernels::kept_checked)
    };
    let (libraries, flags): (Vec<String>, Vec<String>) = launch_selection(command)
        .into_iter()
        .partition(|f| ours(f).is_some());
    let libraries = libraries
        .first()
        .and_then(|f| ours(f))
        .map(|kept| left_out_libraries(tool, &kept));
    let blocks = command
        .windows(2)
        .any(|w| w[0] == super::launches::FIRST_BLOCK_OPTION && w[1] == "0");
    let launches =
        (!flags.is_empty()).then(|| format!("only the launches selected by {}", flags.join(" ")));
    // racecheck told to analyse one block of each launch (--racecheck-blocks
    // first): a race in the other blocks is not seen.
    let blocks = blocks.then(|| {
        format!(
            "only block (cluster) 0 of each launch analysed: {} 0",
            super::launches::FIRST_BLOCK_OPTION
        )
    });
    let said: Vec<String> = libraries
        .into_iter()
        .chain(launches)
        .chain(blocks)
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        format!(" ({})", said.join("; "))
    }
}

/// What a stage's library filter left out, and what it kept checked for
/// the program's own kernels (`kept`: the filter's names it lacks).
fn left_out_libraries(tool: Tool, kept: &[&str]) -> String {
    if tool == Tool::Initcheck {
        // Its filter never had PyTorch's names: only the libraries' count.
        let own: Vec<&str> = kept
            .iter()
            .copied()
            .filter(|name| crate::tools::library_kernels::LIBRARY_KERNEL_NAMES.contains(name))
            .collect();
        return format!(
            "library kernels (cuDNN, cuBLAS, CUTLASS, NCCL) left out{}, what they write still \
             tracked: an uninitialised read inside one never gates without the line that \
             launched it (--gate-scope all checks them)",
            still_checked(&own)
        );
    }
    let what = if tool == Tool::Synccheck {
        "a barrier error"
    } else {
        "a race"
    };
    format!(
        "library kernels (cuDNN, cuBLAS, CUTLASS, NCCL) and PyTorch's (ATen) left out{}: \
         {what} inside one is their own code and never gates (--gate-scope all checks them)",
        still_checked(kept)
    )
}

fn still_checked(kept: &[&str]) -> String {
    if kept.is_empty() {
        String::new()
    } else {
        format!(
            " but for names the program's own kernels carry, still checked ({})",
            kept.join(", ")
        )
    }
}

/// compute-sanitizer's line when the program faulted in a way the tool
/// could not attribute to a checked access; it then aborts the program.
const UNHANDLED_FAULT: &str = "failed to handle a hardware exception";

/// Why a stage ended in an unhandled fault, and what to do. With launches
/// left unchecked it is what the tool does to cuDNN's kernels: ResNet-18's
/// step crashed under racecheck with `--launch-skip 100000`, `--launch-count
/// 64` and a kernel filter alike, and ran to the end with every launch
/// checked (sample-reports/beyond/launch_ranges/).
fn unhandled_fault(command: &[String]) -> String {
    let selection = launch_selection(command);
    if selection.is_empty() {
        return "the program crashed under the tool with a fault it could not handle \
                (\"The Sanitizer failed to handle a hardware exception\"): checked only up to the \
                crash"
            .into();
    }
    format!(
        "the program crashed under the tool with a fault it could not handle, as it does when \
         kernels it was told not to check run beside checked ones ({}; seen with cuDNN's \
         kernels): checked only up to the crash; check every launch (leave out \
         --sanitizer-launch-skip, --sanitizer-launch-count and --sanitizer-kernel)",
        selection.join(" ")
    )
}
