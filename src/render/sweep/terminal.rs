//! The sweep on a terminal: the verdict, a row per target, the sites
//! folded over targets, and the trend.

use std::fmt::Write as _;

use cudawatch_model::{SweepReport, VerdictLabel};
use tabled::builder::Builder;

use crate::render::describe::shorten;
use crate::render::style::Style;

/// How many sites the table shows; the JSON has them all.
const SITES_SHOWN: usize = 25;

/// The human report.
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
    let mut b = Builder::default();
    b.push_record([
        "target",
        "outcome",
        "expectation",
        "findings",
        "gpu",
        "time",
        "change",
        "why",
    ]);
    for t in &report.targets {
        b.push_record([
            t.name.clone(),
            super::outcome(t),
            super::expectation(t),
            format!(
                "{} gating / {}",
                t.counts.gating,
                t.counts.errors + t.counts.warnings + t.counts.notes
            ),
            t.gpu.clone().unwrap_or_else(|| "-".into()),
            if t.seconds > 0.0 {
                format!("{:.1} s", t.seconds)
            } else {
                "-".into()
            },
            super::change(t.change).to_string(),
            shorten(&t.summary, 70),
        ]);
    }
    out.push_str(&crate::render::terminal::table(b, width));
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
        let mut b = Builder::default();
        b.push_record([
            "kind", "owner", "where", "programs", "gates in", "change", "message",
        ]);
        for s in sites.iter().take(SITES_SHOWN) {
            let site = &s.site;
            let place = site
                .location
                .as_ref()
                .map(|l| {
                    format!(
                        "{}:{}",
                        l.file.rsplit('/').next().unwrap_or(&l.file),
                        l.line
                    )
                })
                .or_else(|| site.kernel.as_deref().map(|k| shorten(k, 40)))
                .unwrap_or_else(|| "-".into());
            b.push_record([
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
                if s.gating_in.is_empty() {
                    "-".into()
                } else {
                    s.gating_in.len().to_string()
                },
                super::change(s.change).to_string(),
                shorten(&site.message, 60),
            ]);
        }
        out.push_str(&crate::render::terminal::table(b, width));
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
    if !report.fixed_sites.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold(&format!(
                "Fixed since the baseline ({})",
                report.fixed_sites.len()
            ))
        );
        for f in &report.fixed_sites {
            let _ = writeln!(
                out,
                "  {} ({})",
                shorten(&f.message, 80),
                f.targets.join(", ")
            );
        }
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
    if !report.warnings.is_empty() {
        let _ = writeln!(out, "\n{}", style.warn("Warnings"));
        for w in &report.warnings {
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
    out
}
