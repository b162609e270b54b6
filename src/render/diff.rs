//! `cudawatch diff` in its two formats. Both reports may come from anyone:
//! the text is written from a neutralised copy (no escape sequence, carriage
//! return or forged verdict line reaches the terminal), the JSON is the
//! model, lossless, like every JSON export.

use std::fmt::Write as _;

use cudawatch_model::{ReportDiff, Site};

use super::Exporter;
use super::style::Style;

/// `diff --format json`.
pub struct DiffJson;

impl Exporter<ReportDiff> for DiffJson {
    fn render(&self, diff: &ReportDiff) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(diff).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

/// `diff` for a person: a line per site under new, fixed, unchanged and
/// not checked again.
pub struct DiffText {
    /// Colours for the stream it goes to.
    pub style: Style,
}

impl Exporter<ReportDiff> for DiffText {
    fn render(&self, diff: &ReportDiff) -> Vec<u8> {
        let diff = &super::untrusted::walk(diff);
        let style = self.style;
        let mut out = String::new();
        let line = |out: &mut String, mark: &str, s: &Site| {
            let at = s
                .location
                .as_ref()
                .map(|l| format!(" at {l}"))
                .unwrap_or_default();
            let kernel = s
                .kernel
                .as_ref()
                .map(|k| format!(" in {k}"))
                .unwrap_or_default();
            // Whose, when it is not the user's: such a site lists as new
            // without failing the diff (outside the gate's scope).
            let whose = s
                .owner
                .as_ref()
                .filter(|o| o.owner != cudawatch_model::Owner::User)
                .map(|o| format!(", {}", o.component))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {mark} {} {}{at}{kernel}: {} (×{}{whose})",
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
        out.into_bytes()
    }
}
