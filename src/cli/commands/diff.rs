//! `cudawatch diff OLD NEW`: which sites are new, fixed or unchanged
//! between two reports, by their stable ids (addresses, threads and
//! absolute paths are not part of an id, so reruns match).

use std::collections::HashSet;
use std::fmt::Write as _;

use cudawatch_model::{InputKind, Outcome, Report, Site, Tool};
use serde::Serialize;

use crate::cli::args::{DiffArgs, Format};
use crate::cli::settings;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::judge::{Policy, baseline};
use crate::render::style::Styles;
use crate::render::untrusted::clean;

/// The diff, as `--format json` prints it.
#[derive(Debug, Serialize)]
pub struct Diff<'a> {
    /// In NEW only.
    pub new: Vec<&'a Site>,
    /// In OLD only.
    pub fixed: Vec<&'a Site>,
    /// In both (as NEW has them).
    pub unchanged: Vec<&'a Site>,
    /// In OLD only, but the tool that found them did not check NEW to its
    /// end (not run, missing, inconclusive): gone from NEW proves nothing.
    pub not_rechecked: Vec<&'a Site>,
}

/// The tools that checked NEW to the end: a stage that ended clean or with
/// findings, or (for a report of parsed files, which has no stages) a tool
/// output read without a warning against it.
fn rechecked(report: &Report) -> HashSet<Tool> {
    if report.stages.is_empty() {
        return report
            .inputs
            .iter()
            .filter(|i| i.kind != InputKind::ProgramOutput)
            .filter(|i| !report.warnings.iter().any(|w| w.source == i.path))
            .map(|i| i.tool)
            .collect();
    }
    report
        .stages
        .iter()
        .filter(|s| matches!(s.outcome, Outcome::Clean | Outcome::Findings))
        .map(|s| s.tool)
        .collect()
}

/// Runs `cudawatch diff`; exits 1 when NEW has sites OLD did not at or
/// above `--fail-on`.
pub fn run(args: &DiffArgs, styles: Styles) -> Result<i32, ExpectedError> {
    let old = baseline::read_report(&args.old)?;
    let new = baseline::read_report(&args.new)?;
    let policy = Policy {
        fail_on: settings::fail_on(args.fail_on),
        ..Policy::default()
    };
    let old_ids: HashSet<&str> = old.findings.iter().map(|s| s.id.as_str()).collect();
    let new_ids: HashSet<&str> = new.findings.iter().map(|s| s.id.as_str()).collect();
    let checked = rechecked(&new);
    let (fixed, not_rechecked): (Vec<&Site>, Vec<&Site>) = old
        .findings
        .iter()
        .filter(|s| !new_ids.contains(s.id.as_str()))
        .partition(|s| checked.contains(&s.tool));
    let diff = Diff {
        new: new
            .findings
            .iter()
            .filter(|s| !old_ids.contains(s.id.as_str()))
            .collect(),
        fixed,
        not_rechecked,
        unchanged: new
            .findings
            .iter()
            .filter(|s| old_ids.contains(s.id.as_str()))
            .collect(),
    };
    // The diff is the product: on stdout, as JSON or as text.
    if args.format == Format::Json {
        let text = serde_json::to_string_pretty(&diff).map_err(|e| ExpectedError::Write {
            target: "stdout".into(),
            message: e.to_string(),
        })?;
        crate::render::write_stdout(format!("{text}\n").as_bytes())?;
    } else {
        crate::render::write_stdout(render(&diff, styles.stdout).as_bytes())?;
    }
    let mut code = exit_codes::CLEAN;
    if diff.new.iter().any(|s| policy.gates(s)) {
        code = exit_codes::FINDINGS;
    }
    if !diff.not_rechecked.is_empty() {
        code = exit_codes::worst(code, exit_codes::INCONCLUSIVE);
    }
    Ok(code)
}

fn render(diff: &Diff<'_>, style: crate::render::style::Style) -> String {
    let mut out = String::new();
    let line = |out: &mut String, mark: &str, s: &Site| {
        let at = s
            .location
            .as_ref()
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        // Both reports may come from anyone: nothing of theirs reaches the
        // terminal raw (escapes, carriage returns, a forged verdict line).
        let _ = writeln!(
            out,
            "  {mark} {} {}{}: {} (×{})",
            s.tool,
            s.kind.id(),
            clean(&at),
            clean(&s.message),
            s.count
        );
    };
    let _ = writeln!(out, "{}", style.bad(&format!("new ({})", diff.new.len())));
    diff.new.iter().for_each(|s| line(&mut out, "+", s));
    let _ = writeln!(
        out,
        "{}",
        style.good(&format!("fixed ({})", diff.fixed.len()))
    );
    diff.fixed.iter().for_each(|s| line(&mut out, "-", s));
    let _ = writeln!(
        out,
        "{}",
        style.dim(&format!("unchanged ({})", diff.unchanged.len()))
    );
    diff.unchanged.iter().for_each(|s| line(&mut out, "=", s));
    if !diff.not_rechecked.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            style.bad(&format!(
                "not checked again ({}): the tool that found them did not check NEW to its end",
                diff.not_rechecked.len()
            ))
        );
        diff.not_rechecked
            .iter()
            .for_each(|s| line(&mut out, "?", s));
    }
    out
}
