//! The pre-deployment checklist: each item a user would tick before
//! shipping GPU code, judged from the report as pass, fail or inconclusive,
//! with its evidence. Pure: the report in, the items out.

use cudawatch_model::{
    CheckStatus, ChecklistItem, FindingKind, KernelCoalescing, Outcome, Report, Severity, Site,
    StageReport, Tool,
};

use super::policy::{Policy, Thresholds, is_open};
use crate::words::plural;

/// The checklist of a run's report (empty for reports without stages).
pub fn judge(report: &Report, policy: &Policy) -> Vec<ChecklistItem> {
    let thresholds = policy.thresholds;
    if report.stages.is_empty() {
        return of_parsed_files(report, policy);
    }
    let stage = |tool: Tool| report.stages.iter().find(|s| s.tool == tool);
    let errors = |pred: &dyn Fn(&Site) -> bool| open_errors(report, policy, pred);
    let followers = |pred: &dyn Fn(&Site) -> bool| following(report, pred);
    let mut items = Vec::new();
    let mut item = |id: &str, title: &str, (status, evidence): (CheckStatus, String)| {
        items.push(ChecklistItem {
            id: id.into(),
            title: title.into(),
            status,
            evidence,
        });
    };

    item(
        "plain_run_exits_cleanly",
        "plain run exits cleanly",
        plain_item(report, stage(Tool::Plain)),
    );
    for (id, title, judged) in stage_checks(report, policy) {
        item(id, title, judged);
    }
    item(
        "oom_recovery",
        "Test OOM recovery",
        recovery_item(report, stage(Tool::OomRecovery)),
    );
    let leaks = errors(&|s| s.kind == FindingKind::Leak);
    let leaks_after = followers(&|s| s.kind == FindingKind::Leak);
    item(
        "no_leaks",
        "no device memory leaks",
        leaks_item(report, stage(Tool::Memcheck), &leaks, &leaks_after),
    );
    let api = errors(&|s| {
        matches!(
            s.kind,
            FindingKind::ApiError | FindingKind::CudaError | FindingKind::LibraryError
        )
    });
    let api_after = followers(&|s| {
        matches!(
            s.kind,
            FindingKind::ApiError | FindingKind::CudaError | FindingKind::LibraryError
        )
    });
    item(
        "no_cuda_api_errors",
        "no CUDA API errors",
        api_errors_item(stage(Tool::Memcheck), &api, &api_after),
    );
    let refused = |s: &Site| {
        let error = s.error.as_deref().unwrap_or("");
        matches!(
            error,
            "cudaErrorInvalidConfiguration"
                | "cudaErrorLaunchOutOfResources"
                | "cudaErrorCooperativeLaunchTooLarge"
        ) || (error == "cudaErrorInvalidValue" && s.message.contains("Launch"))
    };
    // memcheck names the refused launch (cudaLaunchKernel) even where its
    // record folds under the plain run's error as the same failure.
    let mut launch = errors(&refused);
    launch.extend(followers(&refused));
    item(
        "launch_configurations_valid",
        "launch configurations valid",
        match launch.first() {
            Some(first) => (CheckStatus::Fail, first.message.clone()),
            None if stage(Tool::Memcheck).is_some_and(ran)
                || stage(Tool::Plain).is_some_and(ran) =>
            {
                (CheckStatus::Pass, "no launch was refused".into())
            }
            None => not_checked(stage(Tool::Plain)),
        },
    );
    item(
        "coalescing_within_thresholds",
        "coalescing within thresholds",
        coalescing(report, stage(Tool::Ncu), policy),
    );
    item(
        "memory_headroom",
        "GPU memory headroom",
        headroom(report, stage(Tool::Plain), thresholds),
    );
    items
}

/// The leak item: memcheck's `--leak-check full` findings, what follows
/// the root cause (a program that bailed out), and leaks accepted.
fn leaks_item(
    report: &Report,
    memcheck: Option<&StageReport>,
    leaks: &[&Site],
    leaks_after: &[&Site],
) -> (CheckStatus, String) {
    match memcheck {
        Some(s)
            if ran(s)
                && s.summary
                    .failures
                    .iter()
                    .any(|l| l.contains("didn't terminate successfully")) =>
        {
            (
                CheckStatus::Inconclusive,
                "the program crashed after its output under memcheck's leak check, so the leak check \
                 did not finish"
                    .into(),
            )
        }
        Some(s) if ran(s) && leaks.is_empty() && !leaks_after.is_empty() => (
            CheckStatus::Inconclusive,
            format!(
                "the leaks ({}) follow the root cause: the program bailed out before freeing; fix it and run again",
                plural(leaks_after.len() as u64, "site")
            ),
        ),
        Some(s) if ran(s) && leaks.is_empty() && !s.command.iter().any(|a| a == "--leak-check") => (
            CheckStatus::Skipped,
            "memcheck ran without --leak-check (off for Python, whose teardown crashes under it; \
             --leak-check full forces it)"
                .into(),
        ),
        Some(s) if ran(s) && leaks.is_empty() => {
            // A suppressed or known leak was found all the same: the
            // item says so, never "found none".
            let accepted: u64 = report
                .findings
                .iter()
                .filter(|l| l.kind == FindingKind::Leak && !is_open(l))
                .map(|l| l.count)
                .sum();
            (
                CheckStatus::Pass,
                if accepted == 0 {
                    "memcheck --leak-check full found none".into()
                } else {
                    format!(
                        "memcheck --leak-check full found no open leak; {} accepted \
                         (suppressed or in the baseline)",
                        plural(accepted, "leak")
                    )
                },
            )
        }
        Some(s) if ran(s) || !leaks.is_empty() => {
            let bytes: u64 = leaks.iter().filter_map(|l| l.bytes).sum();
            let count: u64 = leaks.iter().map(|l| l.count).sum();
            (
                CheckStatus::Fail,
                format!("{bytes} bytes leaked in {}", plural(count, "allocation")),
            )
        }
        other => not_checked(other),
    }
}

/// The API-error item: errors of memcheck and the plain run, and those
/// that only follow the root cause.
fn api_errors_item(
    memcheck: Option<&StageReport>,
    api: &[&Site],
    api_after: &[&Site],
) -> (CheckStatus, String) {
    match (api.first(), memcheck.filter(|s| ran(s))) {
        (None, Some(_)) if !api_after.is_empty() => (
            CheckStatus::Inconclusive,
            format!(
                "only errors that follow the root cause ({}, first: {})",
                plural(api_after.len() as u64, "site"),
                api_after[0].message
            ),
        ),
        (Some(first), _) => (
            CheckStatus::Fail,
            format!(
                "{}, first: {}",
                plural(api.len() as u64, "site"),
                first.message
            ),
        ),
        (None, Some(_)) => (
            CheckStatus::Pass,
            "no API error in memcheck or the plain run".into(),
        ),
        (None, None) => not_checked(memcheck),
    }
}

/// The plain run's item: its own exit and what it printed, accepted when
/// every site it gave is suppressed or in the baseline.
fn plain_item(report: &Report, plain: Option<&StageReport>) -> (CheckStatus, String) {
    match plain {
        Some(s) if s.outcome == Outcome::Clean => (CheckStatus::Pass, s.reason.clone()),
        // What the plain run printed is accepted when every site it
        // gave is suppressed or in the baseline; a crash with no site
        // (TargetFailed) has nothing to accept.
        Some(s)
            if s.outcome == Outcome::Findings
                && !report
                    .findings
                    .iter()
                    .any(|site| site.tool == Tool::Plain && is_open(site)) =>
        {
            (
                CheckStatus::Pass,
                format!("{}, all accepted (suppressed or in the baseline)", s.reason),
            )
        }
        Some(s) if matches!(s.outcome, Outcome::Findings | Outcome::TargetFailed) => {
            (CheckStatus::Fail, s.reason.clone())
        }
        other => not_checked(other),
    }
}

/// The OOM-recovery item. It gates only when asked (`--gate-oom-recovery`,
/// which raises its finding to an error): otherwise a program that does not
/// recover is said so, as a choice not to gate, never as a pass.
fn recovery_item(report: &Report, recovery: Option<&StageReport>) -> (CheckStatus, String) {
    let unrecovered = report
        .findings
        .iter()
        .find(|s| s.kind == FindingKind::OomNotRecovered && is_open(s));
    match unrecovered {
        Some(site) if site.severity == Severity::Error => by_stage(recovery, &[site]),
        Some(_) => (
            CheckStatus::Skipped,
            format!(
                "not gating (--gate-oom-recovery to gate): {}",
                recovery.map_or("no recovery", |s| s.reason.as_str())
            ),
        ),
        None if recovery.is_none() => (
            CheckStatus::Skipped,
            "opt-in: --stages ...,memory,oom-recovery runs the program on 60% of the memory \
             it needs"
                .into(),
        ),
        None => by_stage(recovery, &[]),
    }
}

/// Parsed files: only the coalescing thresholds have something to judge
/// (ncu pages), and they are applied rather than ignored.
fn of_parsed_files(report: &Report, policy: &Policy) -> Vec<ChecklistItem> {
    if report.coalescing.is_empty() {
        return Vec::new();
    }
    let (status, evidence) = coalescing(report, None, policy);
    vec![ChecklistItem {
        id: "coalescing_within_thresholds".into(),
        title: "coalescing within thresholds".into(),
        status,
        evidence,
    }]
}

/// The open errors in the gate's scope that `pred` picks, root causes only.
fn open_errors<'a>(
    report: &'a Report,
    policy: &Policy,
    pred: &dyn Fn(&Site) -> bool,
) -> Vec<&'a Site> {
    report
        .findings
        .iter()
        .filter(|s| {
            s.severity == Severity::Error
                && is_open(s)
                && policy.in_scope(s)
                && s.consequence_of.is_none()
                && pred(s)
        })
        .collect()
}

/// Sites that only follow the root cause: they say the check could not be
/// judged past the failure, not that it passed or failed.
fn following<'a>(report: &'a Report, pred: &dyn Fn(&Site) -> bool) -> Vec<&'a Site> {
    report
        .findings
        .iter()
        .filter(|s| s.consequence_of.is_some() && is_open(s) && pred(s))
        .collect()
}

/// The item each stage kind has of its own ("memcheck clean"), judged.
fn stage_checks(
    report: &Report,
    policy: &Policy,
) -> Vec<(&'static str, &'static str, (CheckStatus, String))> {
    let mut checks = Vec::new();
    // An opt-in stage's item (global races) only where it was asked for:
    // a run that never meant to check it lists no item for it.
    let asked = |tool: &Tool| {
        Tool::DEFAULT_STAGES.contains(tool) || report.stages.iter().any(|s| s.tool == *tool)
    };
    for (tool, id, title) in Tool::STAGES
        .into_iter()
        .filter_map(stage_item)
        .filter(|(tool, ..)| asked(tool))
    {
        let of_stage = |s: &Site| {
            s.tool == tool && !matches!(s.kind, FindingKind::Leak | FindingKind::ApiError)
        };
        let mut found = open_errors(report, policy, &of_stage);
        // The same fault seen by this tool (memcheck's view of an assert)
        // still fails its item, even though it folds under the root cause.
        found.extend(following(report, &|s| {
            of_stage(s) && s.severity == Severity::Error
        }));
        let (mut status, mut detail) =
            by_stage(report.stages.iter().find(|s| s.tool == tool), &found);
        if tool == Tool::Initcheck {
            detail.push_str(&unseen_reads(report));
        }
        // A clean memory stage whose run had too few steps never judged
        // growth: the item is not a pass.
        if tool == Tool::Memory
            && status == CheckStatus::Pass
            && GROWTH_NOT_JUDGED.iter().any(|p| detail.contains(p))
        {
            status = CheckStatus::Skipped;
            detail = format!("not judged: {detail}");
        }
        checks.push((id, title, (status, detail)));
    }
    // The recovery test gates only when asked (`--gate-oom-recovery`, which
    // raises its finding to an error): otherwise a program that does not
    // recover is said so, as a choice not to gate, never as a pass.
    checks
}

fn ran(stage: &StageReport) -> bool {
    matches!(
        stage.outcome,
        Outcome::Clean | Outcome::Findings | Outcome::TargetFailed
    )
}

fn not_checked(stage: Option<&StageReport>) -> (CheckStatus, String) {
    match stage {
        // A stage that does not apply to this program (CSAN to a C++
        // binary, or to a program that never imported torch) has a record
        // and was skipped on purpose; one the run never reached (no record)
        // stays inconclusive below.
        Some(s) if s.outcome == cudawatch_model::Outcome::Skipped && s.end.is_some() => (
            CheckStatus::Skipped,
            format!("{}: {}", s.tool.name(), s.reason),
        ),
        Some(s) => (
            CheckStatus::Inconclusive,
            format!("{}: {}", s.tool.name(), s.reason),
        ),
        None => (
            CheckStatus::Skipped,
            "its stage was not selected (--stages)".into(),
        ),
    }
}

fn by_stage(stage: Option<&StageReport>, found: &[&Site]) -> (CheckStatus, String) {
    match (stage, found.first()) {
        (_, Some(first)) => {
            // The place first: a narrow column cuts the message's end.
            let at = first
                .location
                .as_ref()
                .map(|l| format!(" at {}", l.short()))
                .unwrap_or_default();
            (
                CheckStatus::Fail,
                format!(
                    "{}, first{at}: {}",
                    plural(found.len() as u64, "site"),
                    first.message
                ),
            )
        }
        (Some(s), None) if ran(s) => (CheckStatus::Pass, s.reason.clone()),
        (other, None) => not_checked(other),
    }
}

/// "; 2 sites read what ... wrote, which initcheck cannot see: not
/// judged": how much of initcheck's view this run's Hopper kernels, or the
/// launches it was told not to check, hid.
fn unseen_reads(report: &Report) -> String {
    let doubted = report.findings.iter().filter(|s| s.doubt.is_some()).count();
    if doubted == 0 {
        return String::new();
    }
    if let Some(flags) = super::owner::unchecked_launches(report) {
        return format!(
            "; {} may be reads of what launches it did not check ({flags}) wrote: not gating",
            plural(doubted as u64, "uninitialised-read site")
        );
    }
    match super::owner::unseen_writer(report) {
        Some(writer) => format!(
            "; {} may be reads of what {} wrote, which initcheck cannot see: \
             not gating outside the user's kernels",
            plural(doubted as u64, "uninitialised-read site"),
            writer
        ),
        _ => String::new(),
    }
}

fn coalescing(
    report: &Report,
    stage: Option<&StageReport>,
    policy: &Policy,
) -> (CheckStatus, String) {
    let thresholds: Thresholds = policy.thresholds;
    // Without stages (parsed pages) the pages are the measurement.
    let measured = if report.stages.is_empty() {
        true
    } else {
        stage.is_some_and(ran)
    };
    // The ncu stage found the program launches no kernel: nothing can be
    // uncoalesced, and that was checked (a filter or a failed run would
    // have made the stage inconclusive instead).
    if let Some(s) = stage
        && s.outcome == cudawatch_model::Outcome::Clean
        && s.summary.no_kernels_profiled
        && report.coalescing.is_empty()
    {
        return (CheckStatus::Pass, format!("ncu: {}", s.reason));
    }
    if !measured || report.coalescing.is_empty() {
        return not_checked(stage);
    }
    // Library and framework kernels are how NVIDIA and PyTorch wrote them:
    // reported, but held to the thresholds only under --gate-scope all.
    let kernels: Vec<_> = report
        .coalescing
        .iter()
        .filter(|k| policy.kernel_in_scope(&k.kernel, report))
        .collect();
    if kernels.is_empty() {
        return (
            CheckStatus::Pass,
            format!(
                "no kernel of the user's was profiled; {} framework or library launches are not held to the thresholds (--gate-scope all)",
                report.coalescing.len()
            ),
        );
    }
    // Each threshold gives its worst case and whether that breaks it
    // (Some(true)), keeps it (Some(false)) or cannot be told (None); the
    // item fails on any broken one and shows every one that was checked.
    let mut checks: Vec<(Option<bool>, String)> = Vec::new();
    let max_pct = thresholds.max_wasted_sectors_pct;
    let worst_kernel = kernels
        .iter()
        .filter_map(|k| Some((*k, k.excessive_pct()?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    checks.push(match worst_kernel {
        Some((k, pct)) => (
            Some(pct > max_pct),
            format!(
                "{} wastes {pct:.0}% of its sectors (limit {max_pct:.0}%)",
                k.kernel
            ),
        ),
        None => waste_from_ratio(&kernels, max_pct),
    });
    if let Some(limit) = thresholds.max_line_wasted_sectors_pct {
        let worst_line = report
            .wasteful_lines
            .iter()
            .filter(|l| policy.kernel_in_scope(&l.kernel, report))
            .filter_map(|l| Some((l, l.excessive_pct()?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        checks.push(match worst_line {
            Some((l, pct)) => (
                Some(pct > limit),
                format!(
                    "{} in {} wastes {pct:.0}% of its sectors (line limit {limit:.0}%)",
                    l.location.short(),
                    l.kernel
                ),
            ),
            None => (
                Some(false),
                format!("no line wastes sectors (line limit {limit:.0}%)"),
            ),
        });
    }
    if let Some(limit) = thresholds.max_excess_sectors_per_request {
        checks.push(excess_per_request(&kernels, limit));
    }
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| c.0 == Some(true))
        .map(|c| c.1.as_str())
        .collect();
    let all: Vec<&str> = checks.iter().map(|c| c.1.as_str()).collect();
    if !failed.is_empty() {
        (CheckStatus::Fail, failed.join("; "))
    } else if checks.iter().any(|c| c.0.is_none()) {
        (CheckStatus::Inconclusive, all.join("; "))
    } else {
        (CheckStatus::Pass, format!("worst: {}", all.join("; ")))
    }
}

/// The most sectors one warp-wide request needs when perfectly coalesced:
/// 32 threads × 16 bytes (the widest access) = 512 bytes = 16 sectors.
const MAX_IDEAL_SECTORS_PER_REQUEST: f64 = 16.0;

/// The worst (kernel, loads or stores, sectors per request) of the kernels.
fn worst_ratio<'a>(
    kernels: &[&'a KernelCoalescing],
) -> Option<(&'a KernelCoalescing, &'static str, f64)> {
    kernels
        .iter()
        .flat_map(|k| {
            [("loads", &k.load), ("stores", &k.store)]
                .into_iter()
                .filter_map(move |(what, stats)| Some((*k, what, stats.sectors_per_request()?)))
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
}

/// Waste judged from sectors per request alone (no SourceCounters totals,
/// no bytes-used share): what is certain without the access width. No
/// access needs more than 16 sectors per request, so at 32 at least half
/// of them are wasted whatever the width; below 16 it cannot be told.
fn waste_from_ratio(kernels: &[&KernelCoalescing], max_pct: f64) -> (Option<bool>, String) {
    let Some((k, what, spr)) = worst_ratio(kernels) else {
        return (
            None,
            "no kernel had sector totals, a bytes-used share, or sectors per request".into(),
        );
    };
    let least_wasted = 100.0 * (1.0 - MAX_IDEAL_SECTORS_PER_REQUEST / spr).max(0.0);
    if least_wasted > max_pct {
        (
            Some(true),
            format!(
                "{} {what} need {spr:.1} sectors per request: more than any access width needs \
                 (16 at most), so at least {least_wasted:.0}% of them are wasted (limit {max_pct:.0}%)",
                k.kernel
            ),
        )
    } else {
        (
            None,
            format!(
                "the worst, {} {what}, needs {spr:.1} sectors per request: fine for 16-byte \
                 accesses, wasteful for 4-byte ones (4 is ideal); without the access width \
                 (SourceCounters, or the bytes-used metrics) it cannot be told",
                k.kernel
            ),
        )
    }
}

/// `--max-excess-sectors-per-request`: against the ideal when ncu gave
/// it, else against the least any access width needs beyond 16.
fn excess_per_request(kernels: &[&KernelCoalescing], limit: f64) -> (Option<bool>, String) {
    let exact = kernels
        .iter()
        .flat_map(|k| {
            let ideal = k.ideal_sectors_per_request;
            [("loads", &k.load), ("stores", &k.store)]
                .into_iter()
                .filter_map(move |(what, stats)| {
                    Some((*k, what, stats.sectors_per_request()? - ideal?))
                })
        })
        .max_by(|a, b| a.2.total_cmp(&b.2));
    if let Some((k, what, excess)) = exact {
        return (
            Some(excess > limit),
            format!(
                "{} {what} need {excess:.1} sectors per request beyond the ideal (limit {limit:.1})",
                k.kernel
            ),
        );
    }
    match worst_ratio(kernels) {
        Some((k, what, spr)) if spr - MAX_IDEAL_SECTORS_PER_REQUEST > limit => (
            Some(true),
            format!(
                "{} {what} need {spr:.1} sectors per request, at least {:.1} beyond any ideal \
                 (16 at most; limit {limit:.1})",
                k.kernel,
                spr - MAX_IDEAL_SECTORS_PER_REQUEST
            ),
        ),
        Some((k, what, spr)) => (
            None,
            format!(
                "{} {what} need {spr:.1} sectors per request; without the ideal for their \
                 access width the excess cannot be told (limit {limit:.1})",
                k.kernel
            ),
        ),
        None => (None, "no kernel had sectors per request".into()),
    }
}

fn headroom(
    report: &Report,
    plain: Option<&StageReport>,
    thresholds: Thresholds,
) -> (CheckStatus, String) {
    if let Some(oom) = report
        .findings
        .iter()
        .find(|s| s.kind == FindingKind::OutOfMemory)
    {
        return (
            CheckStatus::Fail,
            format!("{}{}", oom.message, pytorch_peak(report)),
        );
    }
    let (status, evidence) = nvml_headroom(plain, thresholds);
    match (status, report.memory.as_ref().and_then(|m| m.peak)) {
        // No process-level figure, but PyTorch's own: judged on reserved
        // memory (what the allocator took from the GPU).
        (CheckStatus::Inconclusive, Some(peak)) if peak.device_total > 0 => {
            let (status, free) = free_share(peak.reserved, peak.device_total, thresholds);
            (
                status,
                format!(
                    "PyTorch reserved at most {} of {}: {free:.0}% free (at least {:.0}%; no \
                     process-level figure from NVML)",
                    cudawatch_model::size(peak.reserved),
                    cudawatch_model::size(peak.device_total),
                    thresholds.min_memory_headroom_pct
                ),
            )
        }
        (status, _) => (status, format!("{evidence}{}", pytorch_peak(report))),
    }
}

/// "; PyTorch: peak 2.8 GiB allocated, 5.1 GiB reserved" when the memory
/// stage measured it.
fn pytorch_peak(report: &Report) -> String {
    report
        .memory
        .as_ref()
        .and_then(|m| m.peak)
        .map_or(String::new(), |p| {
            format!(
                "; PyTorch: peak {} allocated, {} reserved",
                cudawatch_model::size(p.allocated),
                cudawatch_model::size(p.reserved)
            )
        })
}

/// The share of `total` left free at `used`, in percent, against the threshold.
fn free_share(used: u64, total: u64, thresholds: Thresholds) -> (CheckStatus, f64) {
    let free = 100.0 * total.saturating_sub(used) as f64 / total as f64;
    if free >= thresholds.min_memory_headroom_pct {
        (CheckStatus::Pass, free)
    } else {
        (CheckStatus::Fail, free)
    }
}

/// The plain run's peak from NVML against its GPUs' total.
fn nvml_headroom(plain: Option<&StageReport>, thresholds: Thresholds) -> (CheckStatus, String) {
    match plain.and_then(|s| s.gpu_memory_mib) {
        Some((peak, total)) if total > 0 => {
            let (status, free) = free_share(peak, total, thresholds);
            (
                status,
                format!(
                    "peak {peak} of {total} MiB: {free:.0}% free (at least {:.0}%)",
                    thresholds.min_memory_headroom_pct
                ),
            )
        }
        _ => (
            CheckStatus::Inconclusive,
            "the program's GPU memory was never sampled: no NVML or nvidia-smi, \
             or it held GPU memory for less than one sampling interval"
                .into(),
        ),
    }
}

/// What the memory stage's clean reason says when it did not judge growth
/// (`tools::memory::rules`): too few optimizer steps, or none.
pub const GROWTH_NOT_JUDGED: [&str; 2] = ["too few to judge growth", "growth was not judged"];

/// The checklist item a stage kind has of its own ("memcheck clean"), or
/// `None` for a kind with items of its own making below (`Tool::checklist_item`).
fn stage_item(tool: Tool) -> Option<(Tool, &'static str, &'static str)> {
    tool.checklist_item().map(|(id, title)| (tool, id, title))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudawatch_model::{KernelCoalescing, ProcessEnd, ToolSummary};

    fn with(thresholds: Thresholds) -> Policy {
        Policy {
            thresholds,
            ..Policy::default()
        }
    }

    const LIMITS: Thresholds = Thresholds {
        max_wasted_sectors_pct: 50.0,
        max_line_wasted_sectors_pct: None,
        max_excess_sectors_per_request: None,
        min_memory_headroom_pct: 10.0,
    };

    fn stage(tool: Tool, outcome: Outcome) -> StageReport {
        StageReport {
            tool,
            outcome,
            reason: "r".into(),
            end: Some(ProcessEnd::Exited(0)),
            seconds: Some(1.0),
            command: vec![
                "compute-sanitizer".into(),
                "--leak-check".into(),
                "full".into(),
            ],
            env: Vec::new(),
            unchecked_launches: Vec::new(),
            covered: None,
            summary: ToolSummary::default(),
            artifacts: Vec::new(),
            gpu_memory_mib: Some((1000, 80000)),
            blocked_by: None,
            attempts: Vec::new(),
            stderr_tail: Vec::new(),
        }
    }

    fn status(items: &[ChecklistItem], id: &str) -> CheckStatus {
        items.iter().find(|i| i.id == id).unwrap().status
    }

    #[test]
    fn a_clean_run_passes_unselected_stages_are_skipped_and_unreached_ones_inconclusive() {
        let mut report = Report::new("t");
        report.stages = vec![
            stage(Tool::Plain, Outcome::Clean),
            stage(Tool::Memcheck, Outcome::Clean),
        ];
        let items = judge(&report, &with(LIMITS));
        assert_eq!(status(&items, "plain_run_exits_cleanly"), CheckStatus::Pass);
        assert_eq!(status(&items, "memcheck_clean"), CheckStatus::Pass);
        assert_eq!(status(&items, "no_leaks"), CheckStatus::Pass);
        assert_eq!(status(&items, "racecheck_clean"), CheckStatus::Skipped);
        assert_eq!(
            status(&items, "coalescing_within_thresholds"),
            CheckStatus::Skipped
        );
        assert_eq!(status(&items, "memory_headroom"), CheckStatus::Pass);
        // An interrupted run lists the stages it never reached: inconclusive.
        let mut interrupted = report.clone();
        interrupted.stages.push(StageReport {
            end: None,
            ..stage(Tool::Racecheck, Outcome::Skipped)
        });
        let items = judge(&interrupted, &with(LIMITS));
        assert_eq!(status(&items, "racecheck_clean"), CheckStatus::Inconclusive);
        // A stage that does not apply (CSAN to a C++ binary) is skipped.
        let mut native = report.clone();
        native.stages.push(StageReport {
            end: Some(ProcessEnd::NotStarted),
            ..stage(Tool::Csan, Outcome::Skipped)
        });
        let items = judge(&native, &with(LIMITS));
        assert_eq!(status(&items, "no_stream_races"), CheckStatus::Skipped);
    }

    /// An ncu report of one kernel that wastes 78% of its sectors.
    fn wasting(kernel: &str) -> Report {
        let mut report = Report::new("t");
        report.stages = vec![stage(Tool::Ncu, Outcome::Findings)];
        report.coalescing.push(KernelCoalescing {
            kernel: kernel.into(),
            excessive_sectors: Some(78.0),
            total_sectors: Some(100.0),
            ..KernelCoalescing::default()
        });
        report
    }

    #[test]
    fn wasted_sectors_over_the_limit_fail_coalescing() {
        let report = wasting("gather_strided");
        let items = judge(&report, &with(LIMITS));
        assert_eq!(
            status(&items, "coalescing_within_thresholds"),
            CheckStatus::Fail
        );
        let loose = judge(
            &report,
            &with(Thresholds {
                max_wasted_sectors_pct: 80.0,
                ..LIMITS
            }),
        );
        assert_eq!(
            status(&loose, "coalescing_within_thresholds"),
            CheckStatus::Pass
        );
    }

    #[test]
    fn a_user_kernel_named_like_cublas_counts_by_its_lines_in_the_users_source() {
        use cudawatch_model::{LineSectors, SourceLocation};

        let mut report = wasting("tiled_gemm(const float *, const float *, float *, int)");
        // No line information: named as cuBLAS names its kernels, it is
        // taken for cuBLAS's.
        let items = judge(&report, &with(LIMITS));
        assert_eq!(
            status(&items, "coalescing_within_thresholds"),
            CheckStatus::Pass
        );
        report.wasteful_lines.push(LineSectors {
            kernel: report.coalescing[0].kernel.clone(),
            location: SourceLocation {
                file: "./kernels/gemm.cu".into(),
                line: 19,
            },
            source: String::new(),
            access: "Load".into(),
            excessive_sectors: 78.0,
            theoretical_sectors: 100.0,
            ideal_sectors: 22.0,
        });
        let items = judge(&report, &with(LIMITS));
        assert_eq!(
            status(&items, "coalescing_within_thresholds"),
            CheckStatus::Fail
        );
    }

    fn strided_report() -> Report {
        use cudawatch_model::{AccessStats, LineSectors, SourceLocation};

        let mut report = Report::new("t");
        report.stages = vec![stage(Tool::Ncu, Outcome::Findings)];
        // gather_strided as ncu measured it on the H100 (sample-reports/coalescing).
        report.coalescing.push(KernelCoalescing {
            kernel: "gather_strided".into(),
            load: AccessStats::new(Some(131072.0), Some(4194304.0), Some(12.5)),
            ideal_sectors_per_request: Some(4.0),
            excessive_sectors: Some(3670016.0),
            total_sectors: Some(4718592.0),
            ..KernelCoalescing::default()
        });
        report.wasteful_lines.push(LineSectors {
            kernel: "gather_strided".into(),
            location: SourceLocation {
                file: "coalescing.cu".into(),
                line: 12,
            },
            source: String::new(),
            access: "Load,Store".into(),
            excessive_sectors: 3670016.0,
            theoretical_sectors: 4718592.0,
            ideal_sectors: 1048576.0,
        });
        report
    }

    #[test]
    fn a_line_over_its_limit_fails_even_when_the_kernel_share_passes() {
        let report = strided_report();
        let kernel_only = Thresholds {
            max_wasted_sectors_pct: 90.0,
            ..LIMITS
        };
        assert_eq!(
            status(
                &judge(&report, &with(kernel_only)),
                "coalescing_within_thresholds"
            ),
            CheckStatus::Pass
        );
        let per_line = Thresholds {
            max_line_wasted_sectors_pct: Some(50.0),
            ..kernel_only
        };
        let items = judge(&report, &with(per_line));
        let item = items
            .iter()
            .find(|i| i.id == "coalescing_within_thresholds")
            .unwrap();
        assert_eq!(item.status, CheckStatus::Fail);
        assert!(
            item.evidence.contains("coalescing.cu:12"),
            "{}",
            item.evidence
        );
        assert!(item.evidence.contains("78%"), "{}", item.evidence);
    }

    #[test]
    fn sectors_per_request_beyond_the_ideal_fail_at_their_limit() {
        let report = strided_report();
        // Loads need 32 sectors per request where 4 would do: 28 beyond.
        let judge_at = |limit: f64| {
            let items = judge(
                &report,
                &with(Thresholds {
                    max_wasted_sectors_pct: 90.0,
                    max_excess_sectors_per_request: Some(limit),
                    ..LIMITS
                }),
            );
            items
                .into_iter()
                .find(|i| i.id == "coalescing_within_thresholds")
                .unwrap()
        };
        let strict = judge_at(8.0);
        assert_eq!(strict.status, CheckStatus::Fail);
        assert!(
            strict.evidence.contains("loads need 28.0 sectors"),
            "{}",
            strict.evidence
        );
        assert_eq!(judge_at(28.0).status, CheckStatus::Pass);
    }

    #[test]
    fn too_little_free_memory_fails_headroom() {
        let mut report = Report::new("t");
        let mut plain = stage(Tool::Plain, Outcome::Clean);
        plain.gpu_memory_mib = Some((79000, 80000));
        report.stages = vec![plain];
        assert_eq!(
            status(&judge(&report, &with(LIMITS)), "memory_headroom"),
            CheckStatus::Fail
        );
    }
}
