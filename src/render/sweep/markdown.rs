//! The sweep as Markdown, for `$GITHUB_STEP_SUMMARY` and the morning mail:
//! the verdict, the targets, the sites over targets, and the trend as a
//! Mermaid chart (GitHub draws it) with the numbers in a table beside it.

use std::fmt::Write as _;

use cudawatch_model::SweepReport;

use crate::render::markdown::cell;

/// `--report markdown`.
pub struct SweepMarkdown;

impl crate::render::Exporter<SweepReport> for SweepMarkdown {
    // Over 100 lines on purpose: the sweep summary's sections in document order.
    fn render(&self, report: &SweepReport) -> Vec<u8> {
        render(report).into_bytes()
    }
}

fn render(report: &SweepReport) -> String {
    let mut out = String::from("## cudawatch sweep\n\n");
    for line in &report.verdict {
        let _ = writeln!(out, "**{}** {}\n", line.label.heading(), cell(&line.text));
    }
    if let Some(summary) = super::comparison(report) {
        let _ = writeln!(out, "{}\n", cell(&summary));
    }
    out.push_str("### Targets\n\n| target | outcome | expectation | gating / findings | gpu | time | change | why |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for t in &report.targets {
        let _ = writeln!(
            out,
            "| {} | **{}** | {} | {} / {} | {} | {} | {} | {} |",
            cell(&t.name),
            super::outcome(t),
            super::expectation(t),
            t.counts.gating,
            t.counts.errors + t.counts.warnings + t.counts.notes,
            cell(t.gpu.as_deref().unwrap_or("–")),
            if t.seconds > 0.0 {
                format!("{:.1} s", t.seconds)
            } else {
                "–".into()
            },
            super::change(t.change),
            cell(&t.summary)
        );
    }
    let (sites, _) = super::listed(report);
    let _ = writeln!(
        out,
        "\n### Findings by site, over all targets ({})\n",
        sites.len()
    );
    if sites.is_empty() {
        out.push_str("None.\n");
    } else {
        out.push_str("| kind | owner | where | programs | count | gates in | change | message |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for s in &sites {
            let site = &s.site;
            let place = super::place(site);
            let kind = match crate::render::describe::explanation(site).1 {
                Some(link) => format!("[{}]({link})", site.kind.id()),
                None => site.kind.id().to_string(),
            };
            let _ = writeln!(
                out,
                "| {kind} | {} | {} | {} ({}) | {} | {} | {} | {} |",
                cell(
                    &site
                        .owner
                        .as_ref()
                        .map_or(String::new(), |o| o.component.clone())
                ),
                cell(&place),
                s.targets.len(),
                cell(&s.targets.join(", ")),
                site.count_text(),
                super::gates_in(s),
                super::change(s.change),
                cell(&site.message)
            );
        }
    }
    let (fixed, gone_outside) = super::fixed_sites(report);
    if !fixed.is_empty() {
        out.push_str("\n### Fixed since the baseline\n\n");
        for f in &fixed {
            let _ = writeln!(
                out,
                "- {} ({})",
                cell(&f.message),
                cell(&f.targets.join(", "))
            );
        }
    }
    if let Some(line) = super::gone_outside_scope(gone_outside) {
        let _ = writeln!(out, "\n{line}");
    }
    let trend = super::trend(report);
    if trend.len() > 1 {
        out.push_str("\n### Trend\n\n```mermaid\nxychart-beta\n    title \"Failing targets per sweep\"\n    x-axis [");
        let labels: Vec<String> = trend
            .iter()
            .map(|(at, ..)| format!("\"{}\"", at.get(5..10).unwrap_or(at)))
            .collect();
        out.push_str(&labels.join(", "));
        out.push_str("]\n    y-axis \"failing\"\n    bar [");
        out.push_str(
            &trend
                .iter()
                .map(|(_, _, f, _)| f.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        );
        out.push_str(
            "]\n```\n\n| sweep | targets | failing | wall time |\n| --- | --- | --- | --- |\n",
        );
        for (at, total, failing, seconds) in &trend {
            let _ = writeln!(
                out,
                "| {} | {total} | {failing} | {:.0} s |",
                cell(at),
                seconds
            );
        }
    }
    let warnings = super::warning_lines(report);
    if !warnings.is_empty() {
        out.push_str("\n### Warnings\n\n");
        for w in &warnings {
            let _ = writeln!(out, "- {}", cell(w));
        }
    }
    out
}
