//! `cudawatch diff OLD NEW`: which sites are new, fixed or unchanged
//! between two reports, by their stable ids (addresses, threads and
//! absolute paths are not part of an id, so reruns match).

use std::collections::HashSet;
use std::fmt::Write as _;

use cudawatch_model::Site;
use serde::Serialize;

use crate::cli::args::{DiffArgs, Format};
use crate::cli::settings;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::judge::{Policy, baseline};
use crate::render::style::Styles;

/// The diff, as `--format json` prints it.
#[derive(Debug, Serialize)]
pub struct Diff<'a> {
    /// In NEW only.
    pub new: Vec<&'a Site>,
    /// In OLD only.
    pub fixed: Vec<&'a Site>,
    /// In both (as NEW has them).
    pub unchanged: Vec<&'a Site>,
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
    let diff = Diff {
        new: new
            .findings
            .iter()
            .filter(|s| !old_ids.contains(s.id.as_str()))
            .collect(),
        fixed: old
            .findings
            .iter()
            .filter(|s| !new_ids.contains(s.id.as_str()))
            .collect(),
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
    let fails = diff.new.iter().any(|s| policy.gates(s));
    Ok(if fails {
        exit_codes::FINDINGS
    } else {
        exit_codes::CLEAN
    })
}

fn render(diff: &Diff<'_>, style: crate::render::style::Style) -> String {
    let mut out = String::new();
    let line = |out: &mut String, mark: &str, s: &Site| {
        let at = s
            .location
            .as_ref()
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {mark} {} {}{at}: {} (×{})",
            s.tool,
            s.kind.id(),
            s.message,
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
    out
}
