//! The sweep on a terminal: the verdict, a row per target, the sites
//! folded over targets, and the trend.

use std::fmt::Write as _;

use cudawatch_model::{SweepReport, VerdictLabel};

use crate::render::style::Style;
use crate::render::text::Table;
use crate::words::shorten;

/// How many sites the table shows; the JSON has them all.
const SITES_SHOWN: usize = 25;

/// The human report.
// Over 100 lines on purpose: the sweep report's sections in printed order.
pub fn render(report: &SweepReport, style: Style, width: Option<usize>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} sweep {}",
        style.bold("cudawatch:"),
        report.sweep_id
    );
    let _ = writeln!(
        out,
        "\n{}",
        style.bold(&format!("Targets ({})", report.targets.len()))
    );
    let mut t = Table::new([
        "target",
        "outcome",
        "expectation",
        "findings",
        "gpu",
        "time",
        "change",
        "why",
    ]);
    for target in &report.targets {
        t.row([
            target.name.clone(),
            super::outcome(target),
            super::expectation(target),
            format!(
                "{} gating / {}",
                target.counts.gating,
                target.counts.errors + target.counts.warnings + target.counts.notes
            ),
            target.gpu.clone().unwrap_or_else(|| "-".into()),
            if target.seconds > 0.0 {
                format!("{:.1} s", target.seconds)
            } else {
                "-".into()
            },
            super::change(target.change).to_string(),
            shorten(&target.summary, 70),
        ]);
    }
    out.push_str(&t.render(width));
    let (sites, followers) = super::listed(report);
    let _ = writeln!(
        out,
        "\n{}",
        style.bold(&format!(
            "Findings by site, over all targets ({})",
            sites.len()
        ))
    );
    if sites.is_empty() {
        out.push_str("  none\n");
    } else {
        let mut t = Table::new([
            "kind", "owner", "where", "programs", "count", "gates in", "change", "message",
        ]);
        for s in sites.iter().take(SITES_SHOWN) {
            let site = &s.site;
            let place = site
                .location
                .as_ref()
                .map(|l| l.short())
                .or_else(|| site.kernel.as_deref().map(|k| shorten(k, 40)))
                .unwrap_or_else(|| "-".into());
            t.row([
                site.kind.id().to_string(),
                site.owner
                    .as_ref()
                    .map_or("-".into(), |o| o.component.clone()),
                place,
                format!(
                    "{}: {}",
                    s.targets.len(),
                    shorten(&s.targets.join(", "), 40)
                ),
                site.count_text(),
                super::gates_in(s),
                super::change(s.change).to_string(),
                shorten(&site.message, 60),
            ]);
        }
        out.push_str(&t.render(width));
        if sites.len() > SITES_SHOWN {
            let _ = writeln!(
                out,
                "  … {} more sites in the JSON report",
                sites.len() - SITES_SHOWN
            );
        }
    }
    if followers > 0 {
        let _ = writeln!(
            out,
            "  ({} that follow from a root cause are in the JSON report)",
            crate::words::plural(followers as u64, "site")
        );
    }
    let (fixed, gone_outside) = super::fixed_sites(report);
    if !fixed.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold(&format!("Fixed since the baseline ({})", fixed.len()))
        );
        for f in &fixed {
            let _ = writeln!(
                out,
                "  {} ({})",
                shorten(&f.message, 80),
                f.targets.join(", ")
            );
        }
    }
    if let Some(line) = super::gone_outside_scope(gone_outside) {
        let _ = writeln!(out, "\n{}", style.dim(&line));
    }
    let trend = super::trend(report);
    if trend.len() > 1 {
        let _ = writeln!(out, "\n{}", style.bold("Trend (failing targets per sweep)"));
        for (at, total, failing, _) in trend.iter().rev().take(10).rev() {
            let _ = writeln!(
                out,
                "  {at}  {:<20} {failing}/{total}",
                "█".repeat((*failing).min(20))
            );
        }
    }
    let warnings = super::warning_lines(report);
    if !warnings.is_empty() {
        let _ = writeln!(out, "\n{}", style.warn("Warnings"));
        for w in &warnings {
            let _ = writeln!(out, "  {w}");
        }
    }
    out.push('\n');
    for line in &report.verdict {
        let label = match line.label {
            VerdictLabel::Clean | VerdictLabel::Passed => style.good(line.label.heading()),
            VerdictLabel::Inconclusive | VerdictLabel::Interrupted => {
                style.warn(line.label.heading())
            }
            _ => style.bad(line.label.heading()),
        };
        let _ = writeln!(out, "{label} {}", line.text);
    }
    if let Some(summary) = super::comparison(report) {
        let _ = writeln!(out, "{}", style.dim(&summary));
    }
    // Fitted by the caller (`render::write_human`).
    out
}
