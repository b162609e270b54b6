//! When the memory stage vouches: the hook reported at exit with the
//! allocator's history on; an out-of-memory error or growth across steps
//! are its findings.

use cudawatch_model::{Outcome, ProcessEnd};
use cudawatch_parsers::memory::HookFacts;

use crate::tools::StageRecord;
use crate::tools::outcome::{describe_end, process_problem};
use crate::words::plural;

/// The memory stage: the program run with cudawatch's hook watching
/// PyTorch's allocator. It vouches only when the hook reported at exit
/// with the allocator's history on; an out-of-memory error or memory that
/// grows step over step are its findings.
pub fn rule(
    record: &StageRecord,
    hook: Option<&HookFacts>,
    memory: Option<&cudawatch_model::MemoryReport>,
) -> (Outcome, String) {
    use cudawatch_model::size;
    if let Some(why) = &record.not_applicable {
        return (Outcome::Skipped, why.clone());
    }
    if let Some(problem) = process_problem(record, "the program under the memory hook", "") {
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
            format!(
                "not applicable: the program never imported torch{}, and this stage watches \
                 PyTorch's allocator",
                crate::tools::xla::imported_instead(hook)
            ),
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
                "memory still allocated after each optimizer step grows by {} a step (steps \
                 {}-{}{})",
                size(growth.bytes_per_step),
                growth.from_step,
                growth.to_step,
                growth.of_process()
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
    // A program of several CUDA processes (the ranks of a
    // torch.distributed program): the peak is the highest process's, and
    // growth was judged in each process's own steps.
    let processes = memory.map_or(&[][..], |m| m.processes.as_slice());
    let peak = memory.and_then(|m| m.peak).map_or(String::new(), |p| {
        let whose = match processes.len() {
            0 | 1 => String::new(),
            n => format!(" (the highest of {n} processes' peaks)"),
        };
        format!(
            "peak {} allocated, {} reserved of {}{whose}; ",
            size(p.allocated),
            size(p.reserved),
            size(p.device_total)
        )
    });
    let (stepped, each) = match processes.iter().map(|p| p.steps).min() {
        Some(fewest) if processes.len() > 1 => {
            (fewest, format!(" in each of {} processes", processes.len()))
        }
        _ => (hook.steps, String::new()),
    };
    let steps = match stepped {
        0 => "no optimizer step, so growth was not judged".to_string(),
        n if n < 7 => format!(
            "{} too few to judge growth (7 needed){each}",
            plural(n, "optimizer step")
        ),
        n => format!("no growth over {}{each}", plural(n, "optimizer step")),
    };
    (
        Outcome::Clean,
        format!("torch {torch}'s allocator watched the whole run: {peak}{steps}"),
    )
}
