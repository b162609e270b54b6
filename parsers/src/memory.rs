//! Reader of what cudawatch's Python hook (`src/tools/hook/sitecustomize.py`)
//! writes in the memory stage: `hook.json` at exit, `oom-N.json` from
//! PyTorch's OOM observer, `steps.jsonl` per optimizer step (real
//! captures: `sample-reports/pytorch_instruments/*/memory/`).
//!
//! The hook groups live allocator blocks by their Python stack, innermost
//! frame first, with PyTorch's own files dropped below the operator that
//! allocated; here each stack is folded to the user's line (its first
//! frame outside site-packages and the standard library), so that "what
//! held the memory" reads as lines of the user's program. Blocks with no
//! Python stack were allocated by autograd's backward thread, which has
//! none (seen on every real capture).

use serde::Deserialize;

use crate::model::size;
use crate::model::{
    FindingKind, Frame, Growth, HeldLine, MemoryReport, OomState, OtherProcess, PeakMemory,
    ProcessId, ProcessPeak, Severity, Site, SourceLocation, StepMemory, Tool,
};
use crate::site::{new_site, site_id};

/// Below this, growth per step is noise (allocator rounding, cuBLAS workspaces).
const MIN_GROWTH_PER_STEP: u64 = 1 << 20;
/// The first steps allocate the optimizer's state and gradients: growth is
/// judged after them.
const WARMUP_STEPS: usize = 2;
/// Transitions needed after the warm-up before growth is judged at all.
const MIN_TRANSITIONS: usize = 4;

/// What the hook said about itself at exit.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct HookFacts {
    /// Whether the program imported torch at all.
    #[serde(default)]
    pub torch_imported: bool,
    /// torch's version, when it did.
    #[serde(default)]
    pub torch_version: Option<String>,
    /// Whether the program imported JAX.
    #[serde(default)]
    pub jax_imported: bool,
    /// Whether the program initialised CUDA through torch.
    #[serde(default)]
    pub cuda_initialized: bool,
    /// Whether the process that wrote the facts had CUDA initialised at
    /// its exit, in any stage (hooks before 2026-11-28 did not say).
    #[serde(default)]
    pub cuda_used: Option<bool>,
    /// Whether the allocator's history could be turned on.
    #[serde(default)]
    pub history: Option<bool>,
    /// Whether the OOM observer could be attached.
    #[serde(default)]
    pub oom_observer: Option<bool>,
    /// OOM errors the observer saw.
    #[serde(default)]
    pub ooms: u64,
    /// Optimizer steps seen.
    #[serde(default)]
    pub steps: u64,
    /// What went wrong inside the hook.
    #[serde(default)]
    pub errors: Vec<String>,
    /// Whether PyTorch's CUDA sanitizer was on (the csan stage).
    #[serde(default)]
    pub csan_enabled: Option<bool>,
    /// Operators called while a CUDA graph was being captured, which CSAN
    /// did not book (they only go into the graph).
    #[serde(default)]
    pub csan_captured_ops: u64,
    /// CUDA graph replays, whose work CSAN never sees.
    #[serde(default)]
    pub csan_graph_replays: u64,
    /// `torch.compile` calls under CSAN, whose functions then ran as eager
    /// operators (Dynamo compiles nothing under a dispatch mode).
    #[serde(default)]
    pub csan_compile_calls: u64,
    /// Operator arguments that were sparse tensors, which CSAN alone
    /// cannot book (no data pointer): the hook handed it their indices and
    /// values instead.
    #[serde(default)]
    pub csan_sparse_args: u64,
    /// Arguments of a layout without storage whose parts the hook does not
    /// know: left out of their operator's booking.
    #[serde(default)]
    pub csan_unfollowed_args: u64,
    /// The optimizer step after which the hook ended the program
    /// (`--steps`), when it did.
    #[serde(default)]
    pub stopped_after_steps: Option<u64>,
    /// How many optimizers had each stepped that many times, where the
    /// program had more than one (steps are counted per optimizer).
    #[serde(default)]
    pub stopped_optimizers: Option<u64>,
    /// Optimizers that had stepped fewer times when another's steps ended
    /// the program.
    #[serde(default)]
    pub optimizers_behind: Option<u64>,
    /// The top-level model call after which the hook ended a program that
    /// built no optimizer (`--steps`), when it did.
    #[serde(default)]
    pub stopped_after_calls: Option<u64>,
    /// How often the program turned cuDNN's benchmark mode on in a stage
    /// that kept it off.
    #[serde(default)]
    pub cudnn_benchmark_refused: u64,
    /// The cap the oom-recovery stage applied, or why it could not.
    #[serde(default)]
    pub cap: Option<Cap>,
    #[serde(default)]
    peak: Option<RawPeak>,
    #[serde(default)]
    at_peak: Option<RawState>,
}

/// The oom-recovery stage's cap, as the hook applied it.
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize, PartialEq)]
pub struct Cap {
    /// Bytes the program may reserve.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// The share of the measured peak it is.
    #[serde(default)]
    pub share: Option<f64>,
    /// The peak it was measured against.
    #[serde(default)]
    pub peak_allocated: Option<u64>,
    /// Why no cap was applied.
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct RawPeak {
    max_allocated: u64,
    max_reserved: u64,
    device_total: u64,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct RawGroup {
    bytes: u64,
    count: u64,
    #[serde(default)]
    frames: Vec<(String, u32, String)>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct RawState {
    #[serde(default)]
    groups: Vec<RawGroup>,
    #[serde(default)]
    other: Option<RawOther>,
    #[serde(default)]
    allocated: u64,
    #[serde(default)]
    segments: Option<RawSegments>,
    #[serde(default)]
    reaches_peak: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct RawOther {
    bytes: u64,
    count: u64,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct RawSegments {
    free_in_segments: u64,
    largest_free_block: u64,
    #[serde(default)]
    expandable: bool,
}

#[derive(Debug, Clone, Deserialize)]
struct RawFigures {
    allocated: u64,
    reserved: u64,
    device_free: u64,
    device_total: u64,
}

#[derive(Debug, Clone, Deserialize)]
struct RawOom {
    request: u64,
    #[serde(default)]
    request_frames: Option<Vec<(String, u32, String)>>,
    figures: RawFigures,
    state: RawState,
    #[serde(default)]
    step: u64,
    #[serde(default)]
    fraction_cap: Option<Cap>,
}

#[derive(Debug, Clone, Deserialize)]
struct RawStep {
    step: u64,
    allocated: u64,
    reserved: u64,
    #[serde(default)]
    state: Option<RawState>,
    #[serde(flatten)]
    process: ProcessId,
}

/// What the memory stage left, read: its hook's exit report, the OOM
/// files, `steps.jsonl`, its stderr, and the other processes' commands.
pub struct Artifacts<'a> {
    /// `hook.json` (default when absent: only OOM files were left).
    pub hook: HookFacts,
    /// `oom-N.json`, in order.
    pub ooms: &'a [Vec<u8>],
    /// `steps.jsonl`.
    pub steps: &'a [u8],
    /// `peaks.jsonl`: each CUDA process's peak at its exit.
    pub peaks: &'a [u8],
    /// The stage's stderr (PyTorch's OOM message).
    pub program_output: &'a str,
    /// `processes.json`.
    pub commands: &'a [(u32, String)],
}

/// Reads `processes.json`: `[[pid, "command"], ...]`.
pub fn process_commands(bytes: &[u8]) -> Vec<(u32, String)> {
    serde_json::from_slice(bytes).unwrap_or_default()
}

/// Reads `hook.json`.
pub fn hook_facts(bytes: &[u8]) -> Result<HookFacts, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("hook.json: {e}"))
}

/// The memory stage's artifacts, read into the report's account.
/// `program_output` is the stage's stderr: PyTorch's OOM message names the
/// cap ("3.96 GiB allowed") and other processes' memory.
pub fn read(
    hook: &HookFacts,
    ooms: &[Vec<u8>],
    steps: &[u8],
    program_output: &str,
) -> (MemoryReport, Vec<String>) {
    read_with_commands(hook, ooms, steps, program_output, &[])
}

/// [`read`], with the command names the run saw for other processes'
/// PIDs (`processes.json`, written while they still ran).
pub fn read_with_commands(
    hook: &HookFacts,
    ooms: &[Vec<u8>],
    steps: &[u8],
    program_output: &str,
    commands: &[(u32, String)],
) -> (MemoryReport, Vec<String>) {
    let mut problems = Vec::new();
    let mut report = MemoryReport {
        peak: hook.peak.as_ref().map(|p| PeakMemory {
            allocated: p.max_allocated,
            reserved: p.max_reserved,
            device_total: p.device_total,
        }),
        ..MemoryReport::default()
    };
    if let Some(state) = &hook.at_peak {
        report.at_peak = held_lines(state);
        report.at_peak_exact = state.reaches_peak.unwrap_or(false)
            || report
                .peak
                .is_some_and(|p| state.allocated as f64 >= 0.95 * p.allocated as f64);
    }
    let mut others = other_processes(program_output);
    for other in &mut others {
        other.command = commands
            .iter()
            .find(|(pid, _)| *pid == other.pid)
            .map(|(_, c)| c.clone());
    }
    let allowed = allowed(program_output);
    for (i, bytes) in ooms.iter().enumerate() {
        match serde_json::from_slice::<RawOom>(bytes) {
            Ok(raw) => report.ooms.push(oom_state(raw, &others, allowed)),
            Err(e) => problems.push(format!("oom-{}.json: {e}", i + 1)),
        }
    }
    let mut states: Vec<(ProcessId, u64, RawState)> = Vec::new();
    for (n, line) in steps.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<RawStep>(line) {
            Ok(step) => {
                report.steps.push(StepMemory {
                    step: step.step,
                    allocated: step.allocated,
                    reserved: step.reserved,
                    process: step.process,
                });
                if let Some(state) = step.state {
                    states.push((step.process, step.step, state));
                }
            }
            // A program killed mid-write leaves a cut last line.
            Err(e) => problems.push(format!("steps.jsonl line {}: {e}", n + 1)),
        }
    }
    report.growth = growth_of_any_process(&report.steps, &states);
    (report, problems)
}

/// Reads `peaks.jsonl`: a line per process that used CUDA, at its exit.
/// Kept only when there were several (one process's peak is the report's
/// `peak` already).
pub fn process_peaks(bytes: &[u8]) -> (Vec<ProcessPeak>, Vec<String>) {
    #[derive(Deserialize)]
    struct RawProcessPeak {
        #[serde(flatten)]
        process: ProcessId,
        max_allocated: u64,
        max_reserved: u64,
        #[serde(default)]
        steps: u64,
    }
    let mut peaks = Vec::new();
    let mut problems = Vec::new();
    for (n, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<RawProcessPeak>(line) {
            Ok(raw) => peaks.push(ProcessPeak {
                process: raw.process,
                allocated: raw.max_allocated,
                reserved: raw.max_reserved,
                steps: raw.steps,
            }),
            Err(e) => problems.push(format!("peaks.jsonl line {}: {e}", n + 1)),
        }
    }
    if peaks.len() < 2 {
        peaks.clear();
    }
    (peaks, problems)
}

/// Growth judged in each process's own steps (the ranks of a
/// torch.distributed program step at once, and their lines interleave:
/// one series of them would rise and fall from rank to rank), the process
/// growing most.
fn growth_of_any_process(
    steps: &[StepMemory],
    states: &[(ProcessId, u64, RawState)],
) -> Option<Growth> {
    let mut processes: Vec<ProcessId> = Vec::new();
    for step in steps {
        if !processes.contains(&step.process) {
            processes.push(step.process);
        }
    }
    let several = processes.len() > 1;
    processes
        .into_iter()
        .filter_map(|process| {
            let own: Vec<StepMemory> = steps
                .iter()
                .filter(|s| s.process == process)
                .copied()
                .collect();
            let own_states: Vec<(u64, RawState)> = states
                .iter()
                .filter(|(p, _, _)| *p == process)
                .map(|(_, step, state)| (*step, state.clone()))
                .collect();
            let mut growth = growth(&own, &own_states)?;
            growth.process = several.then_some(process);
            Some(growth)
        })
        .max_by_key(|g| g.bytes_per_step)
}

/// The growth finding, when memory grows step over step.
pub fn growth_site(growth: &Growth) -> Site {
    let top = growth.lines.first();
    let mut site = new_site(
        Tool::Memory,
        FindingKind::MemoryGrowth,
        Severity::Error,
        format!(
            "memory still allocated after each optimizer step grows by {} a step (steps {}-{}{}): \
             what this line allocates survives every step, as a tensor kept with its graph \
             does (`losses.append(loss)`); keep `loss.item()` or `.detach()`",
            size(growth.bytes_per_step),
            growth.from_step,
            growth.to_step,
            growth.of_process()
        ),
    );
    if let Some(line) = top {
        site.location = line.location.clone();
        site.python_frame = line.location.as_ref().map(|l| Frame {
            func: Some(line.origin.clone()),
            module: None,
            file: Some(l.file.clone()),
            line: Some(l.line),
            pc: None,
        });
    }
    site.id = site_id(&site, "memory_growth");
    site
}

/// The out-of-memory error as the memory stage saw it: the finding when no
/// earlier stage (the plain run) already reported it, so that a run of the
/// memory stage alone cannot pass an OOM as clean.
pub fn oom_site(oom: &OomState) -> Site {
    let held = oom.held.first().map_or(String::new(), |h| {
        format!(
            "; most held by {} ({})",
            h.location
                .as_ref()
                .map_or(h.origin.clone(), |l| l.to_string()),
            size(h.bytes)
        )
    });
    let mut site = new_site(
        Tool::Memory,
        FindingKind::OutOfMemory,
        Severity::Error,
        format!(
            "CUDA out of memory: asked {} with {} allocated, {} reserved{held}",
            size(oom.request),
            size(oom.allocated),
            size(oom.reserved)
        ),
    );
    site.location = oom.location.clone();
    site.id = site_id(&site, "out_of_memory");
    site
}

/// The oom-recovery stage's finding: under the cap the program ran out of
/// memory at `oom` (the last one the observer saw) and did not finish. A
/// warning: it gates only when the user asks (`--gate-oom-recovery`).
pub fn not_recovered_site(oom: &OomState, cap: Option<&Cap>) -> Site {
    let cap = cap
        .and_then(|c| Some((c.bytes?, c.share?, c.peak_allocated?)))
        .map_or(String::new(), |(bytes, share, peak)| {
            format!(
                " under a cap of {} ({:.0}% of its peak {} allocated)",
                size(bytes),
                share * 100.0,
                size(peak)
            )
        });
    let mut site = new_site(
        Tool::OomRecovery,
        FindingKind::OomNotRecovered,
        Severity::Warning,
        format!(
            "no recovery from out of memory: asked {}{cap}, and the program ended; catch \
             torch.OutOfMemoryError around the step, free what it held, lower the batch and retry",
            size(oom.request)
        ),
    );
    site.location = oom.location.clone();
    site.id = site_id(&site, "oom_not_recovered");
    site
}

/// Fragmentation: the free holes inside PyTorch's segments would have held
/// the request, but no one hole could.
pub fn fragmented(oom: &[u8]) -> bool {
    serde_json::from_slice::<RawOom>(oom).is_ok_and(|raw| {
        let s = raw.state.segments.unwrap_or_default();
        s.free_in_segments >= raw.request && s.largest_free_block < raw.request
    })
}

fn oom_state(raw: RawOom, others: &[OtherProcess], allowed: Option<u64>) -> OomState {
    let segments = raw.state.segments.clone().unwrap_or_default();
    let (location, origin, _) = fold(raw.request_frames.as_deref().unwrap_or(&[]));
    OomState {
        request: raw.request,
        location,
        origin,
        allocated: raw.figures.allocated,
        reserved: raw.figures.reserved,
        device_free: raw.figures.device_free,
        device_total: raw.figures.device_total,
        allowed: raw.fraction_cap.and_then(|c| c.bytes).or(allowed),
        free_in_segments: segments.free_in_segments,
        largest_free_block: segments.largest_free_block,
        fragmentation: segments.free_in_segments >= raw.request
            && segments.largest_free_block < raw.request,
        expandable: segments.expandable,
        expandable_helped: None,
        other_processes: others.to_vec(),
        held: held_lines(&raw.state),
        step: raw.step,
    }
}

/// A stack folded to the user's line: (line, what it is, the framework
/// call below it).
fn fold(frames: &[(String, u32, String)]) -> (Option<SourceLocation>, String, Option<String>) {
    let frame = |(file, line, name): &(String, u32, String)| Frame {
        func: Some(name.clone()),
        module: None,
        file: Some(file.clone()),
        line: Some(*line),
        pc: None,
    };
    if frames.is_empty() {
        return (
            None,
            "autograd's backward (its thread has no Python stack)".into(),
            None,
        );
    }
    let via = frames
        .first()
        .filter(|f| frame(f).is_runtime())
        .map(|(file, line, name)| format!("{name} ({}:{line})", short(file)));
    match frames.iter().find(|f| !frame(f).is_runtime()) {
        Some((file, line, name)) => (
            Some(SourceLocation {
                file: file.clone(),
                line: *line,
            }),
            name.clone(),
            via,
        ),
        None => {
            let (file, line, name) = frames.last().expect("not empty");
            (
                None,
                format!("{name} ({}:{line}; no frame in your files)", short(file)),
                None,
            )
        }
    }
}

/// `site-packages/torch/nn/modules/conv.py` from a full path.
fn short(file: &str) -> &str {
    file.rfind("site-packages/")
        .map(|i| &file[i + "site-packages/".len()..])
        .unwrap_or(file)
}

fn held_lines(state: &RawState) -> Vec<HeldLine> {
    let mut lines: Vec<HeldLine> = Vec::new();
    for group in &state.groups {
        let (location, origin, via) = fold(&group.frames);
        match lines
            .iter_mut()
            .find(|l| l.location == location && (location.is_some() || l.origin == origin))
        {
            Some(line) => {
                line.bytes += group.bytes;
                line.blocks += group.count;
            }
            None => lines.push(HeldLine {
                location,
                origin,
                via,
                bytes: group.bytes,
                blocks: group.count,
            }),
        }
    }
    if let Some(other) = state.other.as_ref().filter(|o| o.count > 0) {
        lines.push(HeldLine {
            location: None,
            origin: "smaller stacks, not listed by the hook".into(),
            via: None,
            bytes: other.bytes,
            blocks: other.count,
        });
    }
    lines.sort_by_key(|l| std::cmp::Reverse(l.bytes));
    lines
}

/// Memory after each step rising in at least four of five transitions
/// after the warm-up, by at least 1 MiB a step on average.
fn growth(steps: &[StepMemory], states: &[(u64, RawState)]) -> Option<Growth> {
    let judged = steps.get(WARMUP_STEPS..)?;
    let transitions = judged.len().checked_sub(1)?;
    if transitions < MIN_TRANSITIONS {
        return None;
    }
    let rises = judged
        .windows(2)
        .filter(|w| w[1].allocated > w[0].allocated)
        .count();
    let (first, last) = (judged[0], judged[judged.len() - 1]);
    let per_step = last.allocated.saturating_sub(first.allocated) / transitions as u64;
    if rises * 5 < transitions * 4 || per_step < MIN_GROWTH_PER_STEP {
        return None;
    }
    Some(Growth {
        bytes_per_step: per_step,
        from_step: first.step,
        to_step: last.step,
        lines: growing_lines(states),
        process: None,
    })
}

/// The lines whose live memory grew between the first and the last
/// recorded state, in bytes per step.
fn growing_lines(states: &[(u64, RawState)]) -> Vec<HeldLine> {
    let (Some((a, first)), Some((b, last))) = (states.first(), states.last()) else {
        return Vec::new();
    };
    if b <= a {
        return Vec::new();
    }
    let before = held_lines(first);
    let mut grown: Vec<HeldLine> = held_lines(last)
        .into_iter()
        .filter_map(|mut line| {
            let was = before
                .iter()
                .find(|l| l.location == line.location && l.origin == line.origin)
                .map_or(0, |l| l.bytes);
            line.bytes = line.bytes.saturating_sub(was) / (b - a);
            (line.bytes >= MIN_GROWTH_PER_STEP / 2 && line.location.is_some()).then_some(line)
        })
        .collect();
    grown.sort_by_key(|l| std::cmp::Reverse(l.bytes));
    grown
}

/// "Process 1248 has 77.17 GiB memory in use" (not this process's own line,
/// "Including non-PyTorch memory, this process has ...").
pub fn other_processes(text: &str) -> Vec<OtherProcess> {
    let mut found: Vec<OtherProcess> = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("Process ") {
        rest = &rest[i + "Process ".len()..];
        let Some((pid, tail)) = rest.split_once(" has ") else {
            continue;
        };
        let Ok(pid) = pid.trim().parse::<u32>() else {
            continue;
        };
        let Some((amount, _)) = tail.split_once(" memory in use") else {
            continue;
        };
        if let Some(bytes) = crate::program::size_in_bytes(amount)
            && !found.iter().any(|p| p.pid == pid)
        {
            found.push(OtherProcess {
                pid,
                command: None,
                bytes,
            });
        }
    }
    found
}

/// "3.96 GiB allowed;" in PyTorch's message: the cap the program set.
fn allowed(text: &str) -> Option<u64> {
    let end = text.find(" allowed;")?;
    let start = text[..end].rfind(". ")? + 2;
    crate::program::size_in_bytes(&text[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytorchs_message_gives_the_cap_and_other_processes() {
        let text = "GPU 0 has a total capacity of 79.18 GiB of which 50.62 MiB is free. \
            Process 1248 has 77.17 GiB memory in use. Including non-PyTorch memory, this process \
            has 1.94 GiB memory in use. 3.96 GiB allowed; Of the allocated memory";
        let others = other_processes(text);
        assert_eq!(others.len(), 1);
        assert_eq!(others[0].pid, 1248);
        assert_eq!(others[0].bytes / (1 << 20), 79022);
        assert_eq!(allowed(text).map(|b| b >> 20), Some(4055));
        assert_eq!(other_processes("Process x has 1 GiB memory in use"), []);
        assert_eq!(crate::program::size_in_bytes("inf GiB"), None);
        assert_eq!(crate::program::size_in_bytes("1e300 GiB"), None);
    }

    #[test]
    fn stacks_fold_to_the_users_line_through_the_framework() {
        let frames = vec![
            (
                "/v/site-packages/torch/nn/modules/conv.py".to_string(),
                548,
                "_conv_forward".to_string(),
            ),
            (
                "/v/site-packages/torchvision/models/resnet.py".to_string(),
                268,
                "_forward_impl".to_string(),
            ),
            ("/work/train.py".to_string(), 12, "<module>".to_string()),
        ];
        let (at, origin, via) = fold(&frames);
        assert_eq!(at.unwrap().to_string(), "/work/train.py:12");
        assert_eq!(origin, "<module>");
        assert_eq!(
            via.as_deref(),
            Some("_conv_forward (torch/nn/modules/conv.py:548)")
        );
        let (at, origin, _) = fold(&[]);
        assert!(at.is_none() && origin.contains("backward"));
    }

    #[test]
    fn steady_memory_and_short_runs_are_not_growth() {
        let steps = |v: &[u64]| -> Vec<StepMemory> {
            v.iter()
                .enumerate()
                .map(|(i, a)| StepMemory {
                    step: i as u64 + 1,
                    allocated: a << 20,
                    reserved: 0,
                    process: ProcessId::default(),
                })
                .collect()
        };
        // Adam's state on the first steps, then flat.
        assert!(growth(&steps(&[100, 300, 300, 300, 300, 300, 300]), &[]).is_none());
        // Rising, but too few steps to tell.
        assert!(growth(&steps(&[100, 120, 140, 160, 180]), &[]).is_none());
        let g = growth(&steps(&[100, 120, 140, 160, 180, 200, 220]), &[]).unwrap();
        assert_eq!(g.bytes_per_step, 20 << 20);
        assert_eq!((g.from_step, g.to_step), (3, 7));
    }

    #[test]
    fn each_rank_is_judged_on_its_own_steps() {
        // Two ranks stepping at once, their lines interleaved: rank 1
        // leaks 4 MiB a step while rank 0, holding more, stays flat. As
        // one series the memory falls and rises by turns, "no growth".
        let mut lines = String::new();
        for step in 1..=9u64 {
            for (rank, allocated) in [(0u64, 500u64 << 20), (1, (100 + 4 * step) << 20)] {
                lines.push_str(&format!(
                    "{{\"step\":{step},\"allocated\":{allocated},\"reserved\":0,\"pid\":{},\"rank\":{rank}}}\n",
                    4000 + rank
                ));
            }
        }
        let (m, problems) = read(&HookFacts::default(), &[], lines.as_bytes(), "");
        assert!(problems.is_empty(), "{problems:?}");
        let g = m.growth.expect("rank 1 grows");
        assert_eq!(g.bytes_per_step, 4 << 20);
        assert_eq!(g.process.unwrap().to_string(), "rank 1 (pid 4001)");
        assert_eq!((g.from_step, g.to_step), (3, 9));
        // One process, as the hook wrote before it said whose steps: as before.
        let single = lines
            .lines()
            .filter(|l| l.contains("\"rank\":1"))
            .map(|l| l.replace(",\"pid\":4001,\"rank\":1", ""))
            .collect::<Vec<_>>()
            .join("\n");
        let (m, _) = read(&HookFacts::default(), &[], single.as_bytes(), "");
        assert_eq!(m.growth.unwrap().process, None);
    }

    #[test]
    fn peaks_of_several_processes_are_kept_and_one_is_not() {
        let two = b"{\"pid\":11,\"rank\":0,\"max_allocated\":5,\"max_reserved\":6,\"steps\":3}\n\
                    {\"pid\":12,\"rank\":1,\"max_allocated\":9,\"max_reserved\":9,\"steps\":3}\n";
        let (peaks, problems) = process_peaks(two);
        assert!(problems.is_empty());
        assert_eq!(peaks.len(), 2);
        assert_eq!(peaks[1].process.to_string(), "rank 1 (pid 12)");
        let (one, _) = process_peaks(&two[..two.iter().position(|b| *b == b'\n').unwrap()]);
        assert!(one.is_empty());
    }
}
