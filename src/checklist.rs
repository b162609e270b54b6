//! The pre-deployment checklist: each item a user would tick before
//! shipping GPU code, judged from the report as pass, fail or inconclusive,
//! with its evidence. Pure: the report in, the items out.

use cudawatch_parsers::model::{
    CheckStatus, ChecklistItem, FindingKind, Outcome, Report, Severity, Site, StageReport, Tool,
};

/// Thresholds the checklist applies.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// Most excessive global sectors a kernel may move, in percent of all its sectors.
    pub max_wasted_sectors_pct: f64,
    /// Least free GPU memory at the plain run's peak, in percent of the total.
    pub min_memory_headroom_pct: f64,
}

/// The checklist of a run's report (empty for reports without stages).
pub fn judge(report: &Report, thresholds: Thresholds) -> Vec<ChecklistItem> {
    if report.stages.is_empty() {
        return Vec::new();
    }
    let stage = |tool: Tool| report.stages.iter().find(|s| s.tool == tool);
    let errors = |pred: &dyn Fn(&Site) -> bool| -> Vec<&Site> {
        report
            .findings
            .iter()
            .filter(|s| s.severity == Severity::Error && s.suppressed.is_none() && pred(s))
            .collect()
    };
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
        match stage(Tool::Plain) {
            Some(s) if s.outcome == Outcome::Clean => (CheckStatus::Pass, s.reason.clone()),
            Some(s) if matches!(s.outcome, Outcome::Findings | Outcome::TargetFailed) => {
                (CheckStatus::Fail, s.reason.clone())
            }
            other => not_checked(other),
        },
    );
    for (tool, id, title) in [
        (Tool::Memcheck, "memcheck_clean", "memcheck clean"),
        (Tool::Racecheck, "racecheck_clean", "racecheck clean"),
        (Tool::Initcheck, "initcheck_clean", "initcheck clean"),
        (Tool::Synccheck, "synccheck_clean", "synccheck clean"),
    ] {
        let found = errors(&|s| {
            s.tool == tool && !matches!(s.kind, FindingKind::Leak | FindingKind::ApiError)
        });
        item(id, title, by_stage(stage(tool), &found));
    }
    let leaks = errors(&|s| s.kind == FindingKind::Leak);
    item(
        "no_leaks",
        "no device memory leaks",
        match stage(Tool::Memcheck) {
            Some(s) if ran(s) && leaks.is_empty() => (
                CheckStatus::Pass,
                "memcheck --leak-check full found none".into(),
            ),
            Some(s) if ran(s) || !leaks.is_empty() => {
                let bytes: u64 = leaks.iter().filter_map(|l| l.bytes).sum();
                let count: u64 = leaks.iter().map(|l| l.count).sum();
                (
                    CheckStatus::Fail,
                    format!("{bytes} bytes leaked in {count} allocations"),
                )
            }
            other => not_checked(other),
        },
    );
    let api = errors(&|s| {
        matches!(
            s.kind,
            FindingKind::ApiError | FindingKind::CudaError | FindingKind::LibraryError
        )
    });
    item(
        "no_cuda_api_errors",
        "no CUDA API errors",
        match (api.first(), stage(Tool::Memcheck).filter(|s| ran(s))) {
            (Some(first), _) => (
                CheckStatus::Fail,
                format!("{} sites, first: {}", api.len(), first.message),
            ),
            (None, Some(_)) => (
                CheckStatus::Pass,
                "no API error in memcheck or the plain run".into(),
            ),
            (None, None) => not_checked(stage(Tool::Memcheck)),
        },
    );
    let launch = errors(&|s| {
        let error = s.error.as_deref().unwrap_or("");
        matches!(
            error,
            "cudaErrorInvalidConfiguration"
                | "cudaErrorLaunchOutOfResources"
                | "cudaErrorCooperativeLaunchTooLarge"
        ) || (error == "cudaErrorInvalidValue" && s.message.contains("Launch"))
    });
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
        coalescing(report, stage(Tool::Ncu), thresholds),
    );
    item(
        "memory_headroom",
        "GPU memory headroom",
        headroom(report, stage(Tool::Plain), thresholds),
    );
    items
}

fn ran(stage: &StageReport) -> bool {
    matches!(
        stage.outcome,
        Outcome::Clean | Outcome::Findings | Outcome::TargetFailed
    )
}

fn not_checked(stage: Option<&StageReport>) -> (CheckStatus, String) {
    match stage {
        Some(s) => (
            CheckStatus::Inconclusive,
            format!("{}: {}", s.tool.name(), s.reason),
        ),
        None => (CheckStatus::Inconclusive, "the stage was not run".into()),
    }
}

fn by_stage(stage: Option<&StageReport>, found: &[&Site]) -> (CheckStatus, String) {
    match (stage, found.first()) {
        (_, Some(first)) => {
            let at = first
                .location
                .as_ref()
                .map(|l| format!(" at {l}"))
                .unwrap_or_default();
            (
                CheckStatus::Fail,
                format!("{} sites, first: {}{at}", found.len(), first.message),
            )
        }
        (Some(s), None) if ran(s) => (CheckStatus::Pass, s.reason.clone()),
        (other, None) => not_checked(other),
    }
}

fn coalescing(
    report: &Report,
    stage: Option<&StageReport>,
    thresholds: Thresholds,
) -> (CheckStatus, String) {
    if !stage.is_some_and(ran) || report.coalescing.is_empty() {
        return not_checked(stage);
    }
    let worst = report
        .coalescing
        .iter()
        .filter_map(|k| Some((k, k.excessive_pct()?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match worst {
        Some((k, pct)) if pct > thresholds.max_wasted_sectors_pct => (
            CheckStatus::Fail,
            format!(
                "{} wastes {pct:.0}% of its sectors (limit {:.0}%)",
                k.kernel, thresholds.max_wasted_sectors_pct
            ),
        ),
        Some((k, pct)) => (
            CheckStatus::Pass,
            format!(
                "worst: {} wastes {pct:.0}% (limit {:.0}%)",
                k.kernel, thresholds.max_wasted_sectors_pct
            ),
        ),
        None => (
            CheckStatus::Inconclusive,
            "no kernel had SourceCounters sector totals".into(),
        ),
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
        return (CheckStatus::Fail, oom.message.clone());
    }
    match plain.and_then(|s| s.gpu_memory_mib) {
        Some((peak, total)) if total > 0 => {
            let free = 100.0 * (total.saturating_sub(peak)) as f64 / total as f64;
            let status = if free >= thresholds.min_memory_headroom_pct {
                CheckStatus::Pass
            } else {
                CheckStatus::Fail
            };
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
            "GPU memory was not sampled (no NVML or nvidia-smi)".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudawatch_parsers::model::{KernelCoalescing, ProcessEnd, ToolSummary};

    const LIMITS: Thresholds = Thresholds {
        max_wasted_sectors_pct: 50.0,
        min_memory_headroom_pct: 10.0,
    };

    fn stage(tool: Tool, outcome: Outcome) -> StageReport {
        StageReport {
            tool,
            outcome,
            reason: "r".into(),
            end: Some(ProcessEnd::Exited(0)),
            seconds: Some(1.0),
            command: Vec::new(),
            env: Vec::new(),
            summary: ToolSummary::default(),
            artifacts: Vec::new(),
            gpu_memory_mib: Some((1000, 80000)),
        }
    }

    fn status(items: &[ChecklistItem], id: &str) -> CheckStatus {
        items.iter().find(|i| i.id == id).unwrap().status
    }

    #[test]
    fn a_clean_run_passes_and_unrun_stages_are_inconclusive() {
        let mut report = Report::new("t");
        report.stages = vec![
            stage(Tool::Plain, Outcome::Clean),
            stage(Tool::Memcheck, Outcome::Clean),
        ];
        let items = judge(&report, LIMITS);
        assert_eq!(status(&items, "plain_run_exits_cleanly"), CheckStatus::Pass);
        assert_eq!(status(&items, "memcheck_clean"), CheckStatus::Pass);
        assert_eq!(status(&items, "no_leaks"), CheckStatus::Pass);
        assert_eq!(status(&items, "racecheck_clean"), CheckStatus::Inconclusive);
        assert_eq!(
            status(&items, "coalescing_within_thresholds"),
            CheckStatus::Inconclusive
        );
        assert_eq!(status(&items, "memory_headroom"), CheckStatus::Pass);
    }

    #[test]
    fn wasted_sectors_over_the_limit_fail_coalescing() {
        let mut report = Report::new("t");
        report.stages = vec![stage(Tool::Ncu, Outcome::Findings)];
        report.coalescing.push(KernelCoalescing {
            kernel: "gather_strided".into(),
            excessive_sectors: Some(78.0),
            total_sectors: Some(100.0),
            ..KernelCoalescing::default()
        });
        let items = judge(&report, LIMITS);
        assert_eq!(
            status(&items, "coalescing_within_thresholds"),
            CheckStatus::Fail
        );
        let loose = judge(
            &report,
            Thresholds {
                max_wasted_sectors_pct: 80.0,
                ..LIMITS
            },
        );
        assert_eq!(
            status(&loose, "coalescing_within_thresholds"),
            CheckStatus::Pass
        );
    }

    #[test]
    fn too_little_free_memory_fails_headroom() {
        let mut report = Report::new("t");
        let mut plain = stage(Tool::Plain, Outcome::Clean);
        plain.gpu_memory_mib = Some((79000, 80000));
        report.stages = vec![plain];
        assert_eq!(
            status(&judge(&report, LIMITS), "memory_headroom"),
            CheckStatus::Fail
        );
    }
}
