//! `cudawatch doctor`'s report, and the environment lines a run's report
//! carries: every check with its status, and the fix under each that is
//! not ok.

use std::fmt::Write as _;

use cudawatch_model::{EnvStatus, Environment};

use super::style::Style;
use super::untrusted::clean;

/// The whole doctor report on a terminal.
pub fn terminal(env: &Environment, style: Style) -> String {
    let mut out = String::new();
    for c in &env.checks {
        let mark = match c.status {
            EnvStatus::Ok => style.good("ok     "),
            EnvStatus::Skipped => style.dim("skipped"),
            EnvStatus::Warning => style.warn("warning"),
            EnvStatus::Problem => style.bad("PROBLEM"),
        };
        let _ = writeln!(out, "{mark}  {}: {}", clean(&c.title), clean(&c.detail));
        if let Some(fix) = c.fix.as_ref().filter(|_| c.status > EnvStatus::Skipped) {
            let _ = writeln!(out, "         fix: {}", clean(fix));
        }
    }
    let _ = writeln!(out, "\n{}", summary(env));
    if !env.probed {
        let _ = writeln!(
            out,
            "{}",
            style.dim("(--quick: the tools were not run on a probe)")
        );
    }
    out
}

/// A check's detail and, where it has one, its fix: `detail (fix: ...)`,
/// for one table cell.
pub fn detail_and_fix(check: &cudawatch_model::EnvCheck) -> String {
    match &check.fix {
        Some(fix) => format!("{} (fix: {fix})", check.detail),
        None => check.detail.clone(),
    }
}

/// `doctor: 1 problem, 2 warnings` (or `doctor: all ok`).
pub fn summary(env: &Environment) -> String {
    let count = |s: EnvStatus| env.checks.iter().filter(|c| c.status == s).count() as u64;
    let (problems, warnings) = (count(EnvStatus::Problem), count(EnvStatus::Warning));
    if problems + warnings == 0 {
        "doctor: all ok".to_string()
    } else {
        format!(
            "doctor: {}, {}",
            crate::words::plural(problems, "problem"),
            crate::words::plural(warnings, "warning")
        )
    }
}
