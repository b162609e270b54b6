//! A sweep judged by the rule a run is judged by: each target's exit code
//! comes from [`super::judge`]; here that code is read against what the
//! sweep file expects ("as expected", "conclusive"), and the rows add up to
//! the sweep's verdict lines and exit code through the same
//! [`Decision`](super::gate::Decision) a run's facts go through.

use cudawatch_model::{
    Expect, Standing, SweepReport, TargetResult, TargetState, VerdictLabel, VerdictLine,
};

use super::gate::Decision;
use crate::exit_codes;
use crate::words::plural;

/// Whether a run that exited `code` checked the program to its end: the
/// gate either passed or failed on what it found.
pub fn conclusive(code: i32) -> bool {
    code == exit_codes::CLEAN || code == exit_codes::FINDINGS
}

/// Whether a run that exited `code` is what the sweep file expects.
pub fn as_expected(expect: Expect, code: Option<i32>) -> bool {
    matches!(
        (expect, code),
        (Expect::Clean, Some(exit_codes::CLEAN))
            | (Expect::Findings, Some(exit_codes::FINDINGS))
            | (
                Expect::Conclusive,
                Some(exit_codes::CLEAN | exit_codes::FINDINGS)
            )
    )
}

/// Where `target` stands.
pub fn standing(target: &TargetResult) -> Standing {
    match target.state {
        TargetState::Finished if target.as_expected => Standing::AsExpected,
        TargetState::Finished if target.exit_code.is_some_and(conclusive) => {
            Standing::NotAsExpected
        }
        _ => Standing::Unchecked,
    }
}

/// Judges a merged sweep: each row's standing, then the sweep's verdict
/// lines and exit code over every row (again after a baseline comparison,
/// which may add warnings).
pub fn judge(report: &mut SweepReport) {
    for target in &mut report.targets {
        target.standing = standing(target);
    }
    let rows = |wanted: Standing| -> Vec<&TargetResult> {
        report
            .targets
            .iter()
            .filter(|t| t.standing == wanted)
            .collect()
    };
    let failing = rows(Standing::NotAsExpected);
    let unchecked = rows(Standing::Unchecked);
    let listed = |rows: &[&TargetResult]| {
        let mut names: Vec<String> = rows
            .iter()
            .take(5)
            .map(|t| format!("{} ({})", t.name, t.summary))
            .collect();
        if rows.len() > 5 {
            names.push(format!("and {} more", rows.len() - 5));
        }
        names.join("; ")
    };
    let total = report.targets.len();
    let mut lines = Vec::new();
    if !failing.is_empty() {
        lines.push(VerdictLine {
            label: VerdictLabel::Findings,
            text: format!(
                "{} of {total} targets not as expected: {}",
                failing.len(),
                listed(&failing)
            ),
        });
    }
    if !unchecked.is_empty() {
        lines.push(VerdictLine {
            label: VerdictLabel::Inconclusive,
            text: format!(
                "{} of {total} targets not fully checked: {}",
                unchecked.len(),
                listed(&unchecked)
            ),
        });
    }
    if !report.warnings.is_empty() {
        lines.push(VerdictLine {
            label: VerdictLabel::Inconclusive,
            text: report.warnings.join("; "),
        });
    }
    if lines.is_empty() {
        let with_findings = report
            .targets
            .iter()
            .filter(|t| t.exit_code == Some(exit_codes::FINDINGS))
            .count();
        let as_expected = if with_findings == 0 {
            format!("{} clean and as expected", every(total))
        } else {
            format!(
                "{} as expected ({} clean, {with_findings} with their expected findings)",
                every(total),
                total - with_findings
            )
        };
        lines.push(VerdictLine {
            label: VerdictLabel::Clean,
            text: as_expected + &narrowed_scope(&report.targets),
        });
    }
    if report.interrupted {
        lines.insert(
            0,
            VerdictLine {
                label: VerdictLabel::Interrupted,
                text: "stopped by Ctrl-C or SIGTERM; `sweep` again on the same directory runs what is left".into(),
            },
        );
    }
    let decision = Decision {
        fails: !failing.is_empty(),
        unchecked: !unchecked.is_empty() || !report.warnings.is_empty(),
        interrupted: report.interrupted,
    };
    report.exit_code = decision.exit_code();
    report.verdict = lines;
}

/// `; not run: csan, memory in 8 targets, ncu in 1 target; the tool stages
/// checked only the first steps of 6 targets`: what the targets' own CLEAN
/// lines said they did not check, which a sweep's CLEAN must not hide.
fn narrowed_scope(targets: &[TargetResult]) -> String {
    let mut left_out: Vec<(&[String], usize)> = Vec::new();
    for target in targets.iter().filter(|t| !t.narrowed.not_run.is_empty()) {
        let stages = target.narrowed.not_run.as_slice();
        match left_out.iter_mut().find(|(s, _)| *s == stages) {
            Some((_, n)) => *n += 1,
            None => left_out.push((stages, 1)),
        }
    }
    let mut out = String::new();
    if !left_out.is_empty() {
        let groups: Vec<String> = left_out
            .iter()
            .map(|(stages, n)| format!("{} in {}", stages.join(", "), plural(*n as u64, "target")))
            .collect();
        out.push_str(&format!("; not run: {}", groups.join(", ")));
    }
    let first_steps = targets.iter().filter(|t| t.narrowed.first_steps).count();
    if first_steps > 0 {
        out.push_str(&format!(
            "; the tool stages checked only the first steps of {} (--whole-program: every step)",
            plural(first_steps as u64, "target")
        ));
    }
    out
}

/// "all 3 targets", or "the 1 target".
fn every(total: usize) -> String {
    if total == 1 {
        "the 1 target".into()
    } else {
        format!("all {total} targets")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_read_the_run_exit_code() {
        assert!(as_expected(Expect::Clean, Some(0)));
        assert!(!as_expected(Expect::Clean, Some(1)));
        assert!(as_expected(Expect::Findings, Some(1)));
        assert!(as_expected(Expect::Conclusive, Some(1)));
        assert!(!as_expected(Expect::Conclusive, Some(3)));
        assert!(!as_expected(Expect::Clean, None));
    }

    fn row(name: &str, expect: Expect, state: TargetState, code: Option<i32>) -> TargetResult {
        TargetResult {
            name: name.into(),
            command: vec!["prog".into()],
            tags: Vec::new(),
            expect,
            state,
            verdict: None,
            exit_code: code,
            as_expected: as_expected(expect, code) && state == TargetState::Finished,
            standing: Standing::Unchecked,
            summary: format!("{name} summary"),
            counts: Default::default(),
            seconds: 1.0,
            gpu: None,
            attempts: 1,
            run_dir: None,
            shard: 0,
            checksum: None,
            change: None,
            warnings: Vec::new(),
            narrowed: Default::default(),
        }
    }

    fn sweep(targets: Vec<TargetResult>) -> SweepReport {
        SweepReport {
            schema_version: cudawatch_model::SCHEMA_VERSION,
            cudawatch_version: "test".into(),
            sweep_id: "id".into(),
            shards: Vec::new(),
            targets,
            sites: Vec::new(),
            fixed_sites: Vec::new(),
            baseline: None,
            history: Vec::new(),
            warnings: Vec::new(),
            interrupted: false,
            verdict: Vec::new(),
            exit_code: -1,
        }
    }

    #[test]
    fn a_sweep_clean_says_what_its_targets_left_out() {
        // Before: "all 3 targets clean and as expected", though two ran
        // without csan and memory and one checked its first steps only.
        let narrowed = |not_run: &[&str], first_steps| cudawatch_model::Narrowed {
            not_run: not_run.iter().map(|s| s.to_string()).collect(),
            first_steps,
        };
        let mut targets = vec![
            row("a", Expect::Clean, TargetState::Finished, Some(0)),
            row("b", Expect::Clean, TargetState::Finished, Some(0)),
            row("c", Expect::Clean, TargetState::Finished, Some(0)),
        ];
        targets[0].narrowed = narrowed(&["csan", "memory"], false);
        targets[1].narrowed = narrowed(&["csan", "memory"], true);
        targets[2].narrowed = narrowed(&["ncu"], false);
        let mut report = sweep(targets);
        judge(&mut report);
        assert_eq!(report.exit_code, exit_codes::CLEAN);
        assert_eq!(
            report.verdict[0].text,
            "all 3 targets clean and as expected; not run: csan, memory in 2 targets, ncu in \
             1 target; the tool stages checked only the first steps of 1 target \
             (--whole-program: every step)"
        );
    }

    #[test]
    fn a_sweep_gets_its_verdict_and_exit_code_by_the_run_rule() {
        // As expected everywhere: clean, exit 0.
        let mut report = sweep(vec![
            row("fine", Expect::Clean, TargetState::Finished, Some(0)),
            row("bug", Expect::Findings, TargetState::Finished, Some(1)),
        ]);
        judge(&mut report);
        assert_eq!(report.exit_code, exit_codes::CLEAN);
        assert_eq!(report.verdict[0].label, VerdictLabel::Clean);
        assert!(
            report.verdict[0]
                .text
                .contains("1 with their expected findings")
        );

        // One conclusive surprise and one run that could not check: both
        // said, and the worse code (inconclusive) wins, as in a run.
        let mut report = sweep(vec![
            row("new-bug", Expect::Clean, TargetState::Finished, Some(1)),
            row("blind", Expect::Clean, TargetState::Finished, Some(3)),
            row("never", Expect::Clean, TargetState::NotRun, None),
        ]);
        judge(&mut report);
        let standings: Vec<Standing> = report.targets.iter().map(|t| t.standing).collect();
        assert_eq!(
            standings,
            [
                Standing::NotAsExpected,
                Standing::Unchecked,
                Standing::Unchecked
            ]
        );
        assert_eq!(report.exit_code, exit_codes::INCONCLUSIVE);
        let labels: Vec<VerdictLabel> = report.verdict.iter().map(|l| l.label).collect();
        assert_eq!(labels, [VerdictLabel::Findings, VerdictLabel::Inconclusive]);
        assert!(
            report.verdict[1]
                .text
                .starts_with("2 of 3 targets not fully checked")
        );

        // Stopped by the user: 130 over everything, said first.
        report.interrupted = true;
        judge(&mut report);
        assert_eq!(report.exit_code, exit_codes::INTERRUPTED);
        assert_eq!(report.verdict[0].label, VerdictLabel::Interrupted);
    }
}
