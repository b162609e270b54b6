//! The sweep as one self-contained HTML page: the verdict, the targets,
//! the sites over targets, and the trend as an inline SVG bar chart.

use std::fmt::Write as _;

use cudawatch_model::{Standing, SweepReport, VerdictLabel};

use crate::render::escape_markup as esc;

/// `--report html`.
pub struct SweepHtml;

impl crate::render::Exporter<SweepReport> for SweepHtml {
    // Over 100 lines on purpose: the sweep page's sections in document order.
    fn render(&self, report: &SweepReport) -> Vec<u8> {
        render(report).into_bytes()
    }
}

fn render(report: &SweepReport) -> String {
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>cudawatch sweep</title>\n<style>\
body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}\
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}th{background:#f4f4f4}\
.bad{color:#b00020;font-weight:600}.warn{color:#a05a00;font-weight:600}.good{color:#11772d;font-weight:600}\
.badge{white-space:nowrap}code{font-size:90%}</style></head><body>\n<h1>cudawatch sweep</h1>\n",
    );
    for line in &report.verdict {
        let class = match line.label {
            VerdictLabel::Clean | VerdictLabel::Passed => "good",
            VerdictLabel::Inconclusive | VerdictLabel::Interrupted => "warn",
            _ => "bad",
        };
        let _ = writeln!(
            out,
            "<p><span class=\"{class} badge\">{}</span> {}</p>",
            line.label.heading(),
            esc(&line.text)
        );
    }
    if let Some(summary) = super::comparison(report) {
        let _ = writeln!(out, "<p>{}</p>", esc(&summary));
    }
    out.push_str("<h2>Targets</h2>\n<table><tr><th>target</th><th>outcome</th><th>expectation</th><th>gating / findings</th><th>gpu</th><th>time</th><th>change</th><th>why</th></tr>\n");
    for t in &report.targets {
        let class = match t.standing {
            Standing::AsExpected => "good",
            Standing::NotAsExpected => "bad",
            Standing::Unchecked => "warn",
        };
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=\"{class} badge\">{}</td><td>{}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&t.name),
            esc(&super::outcome(t)),
            esc(&super::expectation(t)),
            t.counts.gating,
            t.counts.errors + t.counts.warnings + t.counts.notes,
            esc(t.gpu.as_deref().unwrap_or("–")),
            if t.seconds > 0.0 {
                format!("{:.1} s", t.seconds)
            } else {
                "–".into()
            },
            super::change(t.change),
            esc(&t.summary)
        );
    }
    out.push_str("</table>\n");
    let (sites, _) = super::listed(report);
    let _ = writeln!(
        out,
        "<h2>Findings by site, over all targets ({})</h2>",
        sites.len()
    );
    if sites.is_empty() {
        out.push_str("<p>None.</p>\n");
    } else {
        out.push_str("<table><tr><th>kind</th><th>owner</th><th>where</th><th>programs</th><th>count</th><th>gates in</th><th>change</th><th>message</th></tr>\n");
        for s in &sites {
            let site = &s.site;
            let place = super::place(site);
            let kind = match crate::render::describe::explanation(site).1 {
                Some(link) => format!("<a href=\"{}\">{}</a>", esc(&link), site.kind.id()),
                None => site.kind.id().to_string(),
            };
            let _ = writeln!(
                out,
                "<tr><td>{kind}</td><td>{}</td><td><code>{}</code></td><td>{}: {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&site
                    .owner
                    .as_ref()
                    .map_or(String::new(), |o| o.component.clone())),
                esc(&place),
                s.targets.len(),
                esc(&s.targets.join(", ")),
                site.count_text(),
                super::gates_in(s),
                super::change(s.change),
                esc(&site.message)
            );
        }
        out.push_str("</table>\n");
    }
    let (fixed, gone_outside) = super::fixed_sites(report);
    if !fixed.is_empty() {
        out.push_str("<h2>Fixed since the baseline</h2>\n<ul>\n");
        for f in &fixed {
            let _ = writeln!(
                out,
                "<li>{} ({})</li>",
                esc(&f.message),
                esc(&f.targets.join(", "))
            );
        }
        out.push_str("</ul>\n");
    }
    if let Some(line) = super::gone_outside_scope(gone_outside) {
        let _ = writeln!(out, "<p>{}</p>", esc(&line));
    }
    let trend = super::trend(report);
    if trend.len() > 1 {
        out.push_str("<h2>Trend</h2>\n");
        out.push_str(&chart(&trend));
        out.push_str(
            "<table><tr><th>sweep</th><th>targets</th><th>failing</th><th>wall time</th></tr>\n",
        );
        for (at, total, failing, seconds) in &trend {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{total}</td><td>{failing}</td><td>{seconds:.0} s</td></tr>",
                esc(at)
            );
        }
        out.push_str("</table>\n");
    }
    let warnings = super::warning_lines(report);
    if !warnings.is_empty() {
        out.push_str("<h2>Warnings</h2>\n<ul>\n");
        for w in &warnings {
            let _ = writeln!(out, "<li>{}</li>", esc(w));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body></html>\n");
    out
}

/// Failing targets per sweep as bars, scaled to the largest sweep.
fn chart(trend: &[(String, usize, usize, f64)]) -> String {
    let (bar, gap, height) = (24.0, 8.0, 120.0);
    let most = trend.iter().map(|t| t.1).max().unwrap_or(1).max(1) as f64;
    let width = trend.len() as f64 * (bar + gap) + gap;
    let mut svg = format!(
        "<svg role=\"img\" aria-label=\"failing targets per sweep\" width=\"{width}\" height=\"{}\" viewBox=\"0 0 {width} {}\">\n",
        height + 20.0,
        height + 20.0
    );
    for (i, (at, total, failing, _)) in trend.iter().enumerate() {
        let x = gap + i as f64 * (bar + gap);
        let h = (*failing as f64 / most * height).max(if *failing > 0 { 2.0 } else { 0.0 });
        let _ = writeln!(
            svg,
            "<rect x=\"{x}\" y=\"{}\" width=\"{bar}\" height=\"{h}\" fill=\"#b00020\"><title>{}: {failing} of {total} failing</title></rect><text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{failing}</text>",
            height - h,
            esc(at),
            x + bar / 2.0,
            height + 14.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}
