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
// Over 100 lines on purpose: the memory stage's rules in priority order, the
// first that applies deciding.
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
            .map_or(oom.origin.clone(), |l| l.short());
        let top = oom.held.first().map_or(String::new(), |h| {
            format!(
                "; most held by {} ({})",
                h.location.as_ref().map_or(h.origin.clone(), |l| l.short()),
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
    // Said in words the checklist reads (`GROWTH_NOT_JUDGED`): such an
    // item is not a pass.
    let [too_few, not_judged] = crate::judge::checklist::GROWTH_NOT_JUDGED;
    let steps = match stepped {
        0 => format!("no optimizer step, so {not_judged}"),
        n if n < 7 => format!("{} {too_few} (7 needed){each}", plural(n, "optimizer step")),
        n => format!("no growth over {}{each}", plural(n, "optimizer step")),
    };
    (
        Outcome::Clean,
        format!(
            "torch {torch}'s allocator watched every allocation the program made: {peak}{steps}"
        ),
    )
}

/// Why the hook's step records cannot be trusted, if they cannot: each
/// process that counted optimizer steps (`peaks.jsonl`, else `hook.json`
/// for the one process) must have a line in `steps.jsonl` for every step
/// from its first recorded one to the last it counted, each line whole.
/// Records deleted, cut short or garbled would otherwise read as "no
/// growth over N steps".
pub fn damaged_step_records(steps: &[u8], peaks: &[u8], hook: &HookFacts) -> Option<String> {
    use std::collections::BTreeMap;
    let lines = |bytes: &[u8]| -> Result<Vec<serde_json::Value>, usize> {
        String::from_utf8_lossy(bytes)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| serde_json::from_str(l).map_err(|_| i + 1))
            .collect()
    };
    let steps = match lines(steps) {
        Ok(v) => v,
        Err(line) => return Some(format!("steps.jsonl line {line} is not a whole record")),
    };
    let mut counted: BTreeMap<Option<u64>, u64> = BTreeMap::new();
    if let Ok(peaks) = lines(peaks) {
        for p in &peaks {
            if let Some(n) = p["steps"].as_u64() {
                counted.insert(p["pid"].as_u64(), n);
            }
        }
    }
    if counted.is_empty() && hook.steps > 0 && hook.cuda_initialized {
        counted.insert(None, hook.steps);
    }
    for (pid, n) in counted.into_iter().filter(|(_, n)| *n > 0) {
        let mut seen: Vec<u64> = steps
            .iter()
            .filter(|l| pid.is_none() || l["pid"].as_u64() == pid)
            .filter_map(|l| l["step"].as_u64())
            .collect();
        seen.sort_unstable();
        seen.dedup();
        let whole = match (seen.first(), seen.last()) {
            (Some(first), Some(last)) => *last == n && seen.len() as u64 == last - first + 1,
            _ => false,
        };
        if !whole {
            let whose = pid.map_or(String::new(), |p| format!(" in pid {p}"));
            return Some(format!(
                "the hook counted {}{whose} but steps.jsonl holds {} of them",
                plural(n, "optimizer step"),
                seen.len()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(steps: u64) -> HookFacts {
        let mut facts = HookFacts::default();
        facts.steps = steps;
        facts.cuda_initialized = true;
        facts
    }

    fn lines(pid: u64, steps: std::ops::RangeInclusive<u64>) -> String {
        steps
            .map(|s| format!("{{\"step\":{s},\"allocated\":1,\"reserved\":2,\"pid\":{pid}}}\n"))
            .collect()
    }

    #[test]
    fn whole_step_records_are_trusted() {
        let peaks = b"{\"pid\":7,\"steps\":12}\n";
        assert_eq!(
            damaged_step_records(lines(7, 1..=12).as_bytes(), peaks, &facts(12)),
            None
        );
        // Steps before CUDA was used have no line: the records start later.
        assert_eq!(
            damaged_step_records(lines(7, 2..=12).as_bytes(), peaks, &facts(12)),
            None
        );
    }

    #[test]
    fn deleted_cut_or_garbled_step_records_are_not() {
        let peaks = b"{\"pid\":7,\"steps\":12}\n";
        let why = damaged_step_records(b"", peaks, &facts(12)).unwrap();
        assert!(why.contains("counted 12 optimizer steps in pid 7"), "{why}");
        assert!(damaged_step_records(lines(7, 1..=3).as_bytes(), peaks, &facts(12)).is_some());
        let garbled = format!("{}{{\"step\": 4, garbage\n", lines(7, 1..=3));
        assert!(damaged_step_records(garbled.as_bytes(), peaks, &facts(12)).is_some());
        // Without peaks.jsonl, hook.json's count of its one process.
        assert!(damaged_step_records(lines(7, 1..=3).as_bytes(), b"", &facts(12)).is_some());
    }
}
