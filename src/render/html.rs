//! One self-contained HTML page: the checklist, the stages, every finding
//! with its source snippet, and an SVG chart of coalescing per kernel.
//!
//! No script and no request: a Content-Security-Policy of `default-src
//! 'none'` (inline styles only) means the page cannot load anything, and a
//! kernel name that smuggled markup in could not run even if escaping
//! failed. Every string from the report goes through [`escape_markup`].

use std::fmt::Write as _;

use cudawatch_model::{
    Judgement, KernelCoalescing, LineSectors, Report, Severity, Site, StageReport, VerdictLabel,
    Warning,
};

use super::describe;
use super::{Exporter, Judged, escape_markup};

/// `--report html`.
pub struct HtmlExporter;

impl Exporter<Judged<'_>> for HtmlExporter {
    fn render(&self, doc: &Judged<'_>) -> Vec<u8> {
        let (report, judgement) = (doc.report, doc.judgement);
        let mut out = String::with_capacity(64 * 1024);
        head(&mut out, report);
        summary(&mut out, judgement);
        checklist(&mut out, judgement);
        stages(&mut out, &report.stages);
        findings(&mut out, &report.findings, judgement);
        coalescing(&mut out, &report.coalescing, &report.wasteful_lines);
        memory(&mut out, report);
        listed(
            &mut out,
            "warnings",
            "Warnings",
            &Warning::grouped(&report.warnings),
        );
        listed(&mut out, "notes", "Notes", &report.notes);
        environment(&mut out, report.environment.as_ref());
        let _ = write!(
            out,
            "<footer>cudawatch {} · report schema {}</footer>\n</body>\n</html>\n",
            escape_markup(&report.cudawatch_version),
            report.schema_version
        );
        out.into_bytes()
    }
}

const STYLE: &str = r#"
:root { --fail: #c62828; --warn: #b26a00; --pass: #2e7d32; --muted: #666; --line: #ddd; --bg: #fafafa; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1.5em; color: #1a1a1a; }
h1 { margin: 0 0 .2em; font-size: 1.6em; } h2 { margin-top: 1.8em; border-bottom: 1px solid var(--line); padding-bottom: .2em; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .92em; }
.target { color: var(--muted); overflow-wrap: anywhere; }
.verdict { font-weight: 600; padding: .5em .8em; border-radius: 6px; margin: .4em 0; }
.verdict.fail { background: #fdecea; color: var(--fail); } .verdict.inconclusive { background: #fff4e0; color: var(--warn); }
.verdict.pass { background: #e8f5e9; color: var(--pass); }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid var(--line); vertical-align: top; }
td { overflow-wrap: break-word; } td code, td .mono { overflow-wrap: anywhere; } th { background: var(--bg); }
.badge { display: inline-block; white-space: nowrap; min-width: 6.5em; text-align: center; border-radius: 4px; padding: .05em .5em; font-size: .85em; font-weight: 600; color: #fff; }
.badge.pass, .badge.clean { background: var(--pass); } .badge.fail, .badge.error, .badge.findings, .badge.target_failed { background: var(--fail); }
.badge.inconclusive, .badge.warning, .badge.tool_failed { background: var(--warn); } .badge.note, .badge.skipped { background: #757575; }
.finding { border: 1px solid var(--line); border-left: 5px solid #757575; border-radius: 6px; padding: .6em 1em; margin: .8em 0; }
.finding.error { border-left-color: var(--fail); } .finding.warning { border-left-color: var(--warn); }
.finding.accepted { opacity: .7; } .finding h3 { margin: 0 0 .3em; font-size: 1.05em; overflow-wrap: anywhere; }
.finding dl { display: grid; grid-template-columns: 9em 1fr; gap: .15em .8em; margin: .4em 0; }
.finding dt { color: var(--muted); } .finding dd { margin: 0; overflow-wrap: anywhere; }
pre.snippet { background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: .4em 0; overflow-x: auto; }
pre.snippet span { display: block; padding: 0 .8em; white-space: pre; } pre.snippet .hit { background: #fdecea; font-weight: 600; }
.chart text { font: 12px system-ui, sans-serif; fill: #1a1a1a; } .chart .label { font-weight: 600; }
.chart .used { fill: #90a4ae; } .chart .wasted { fill: var(--fail); } .chart .unknown { fill: #e0e0e0; }
.legend span { display: inline-block; width: .9em; height: .9em; vertical-align: middle; margin: 0 .3em 0 1em; }
details { margin: .3em 0; } details ol { margin: .3em 0; font-size: .85em; overflow-wrap: anywhere; }
footer { margin-top: 3em; color: var(--muted); font-size: .85em; }
"#;

fn head(out: &mut String, report: &Report) {
    let target = report.target.join(" ");
    let title = if target.is_empty() {
        "cudawatch report".to_string()
    } else {
        format!("cudawatch: {target}")
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n<h1>cudawatch</h1>\n",
        escape_markup(&title)
    );
    if !target.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"target\"><code>{}</code></p>",
            escape_markup(&target)
        );
    }
    out.push_str("</header>\n");
}

fn summary(out: &mut String, judgement: &Judgement) {
    out.push_str("<section id=\"verdict\">\n");
    for line in &judgement.verdict {
        let class = match line.label {
            VerdictLabel::Clean | VerdictLabel::Passed => "pass",
            VerdictLabel::Findings | VerdictLabel::Failed => "fail",
            VerdictLabel::Inconclusive | VerdictLabel::Interrupted => "inconclusive",
        };
        let _ = writeln!(
            out,
            "<p class=\"verdict {class}\">{} {}</p>",
            line.label.heading(),
            escape_markup(&line.text)
        );
    }
    out.push_str("</section>\n");
}

fn checklist(out: &mut String, judgement: &Judgement) {
    if judgement.checklist.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"checklist\">\n<h2>Pre-deployment checklist</h2>\n<table>\n\
         <thead><tr><th>check</th><th>status</th><th>evidence</th></tr></thead>\n<tbody>\n",
    );
    for item in &judgement.checklist {
        let status = item.status.name();
        let _ = writeln!(
            out,
            "<tr data-check=\"{}\"><td>{}</td><td><span class=\"badge {status}\">{status}</span></td><td>{}</td></tr>",
            escape_markup(&item.id),
            escape_markup(&item.title),
            escape_markup(&item.evidence)
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn stages(out: &mut String, stages: &[StageReport]) {
    if stages.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"stages\">\n<h2>Stages</h2>\n<table>\n\
         <thead><tr><th>stage</th><th>outcome</th><th>why</th><th>exit</th><th>time</th></tr></thead>\n<tbody>\n",
    );
    for stage in stages {
        let outcome = stage.shown_outcome();
        let mut why = stage.shown_reason();
        if let Some((peak, total)) = stage.gpu_memory_mib {
            let _ = write!(why, "; peak GPU memory {peak} of {total} MiB");
        }
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><span class=\"badge {}\">{}</span></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            stage.tool.name(),
            outcome.replace(' ', "_"),
            outcome,
            escape_markup(&why),
            stage
                .end
                .map(|e| escape_markup(&e.to_string()))
                .unwrap_or_default(),
            stage
                .seconds
                .map(|s| format!("{s:.1} s"))
                .unwrap_or_default()
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

/// What the user can act on first, each root cause with the sites that
/// follow from it; framework and library internals outside the gate's
/// scope last, collapsed by component.
fn findings(out: &mut String, sites: &[Site], judgement: &Judgement) {
    // Looked up once, not per site: the page stays linear in the report's
    // size (a 9 MB report of repeated sites once took 92 s and 9.3 GB).
    let outside_ids: std::collections::HashSet<&str> =
        judgement.out_of_scope.iter().map(String::as_str).collect();
    let mut followers: std::collections::HashMap<&str, Vec<&Site>> =
        std::collections::HashMap::new();
    for s in sites {
        if let Some(root) = s.consequence_of.as_deref() {
            followers.entry(root).or_default().push(s);
        }
    }
    let outside = |s: &Site| outside_ids.contains(s.id.as_str());
    // `outside` by the set above; the rule is describe::is_listed's.
    let shown: Vec<&Site> = sites
        .iter()
        .filter(|s| s.consequence_of.is_none() && !outside(s))
        .collect();
    let _ = writeln!(
        out,
        "<section id=\"findings\">\n<h2>Findings by site ({})</h2>",
        shown.len()
    );
    if shown.is_empty() {
        out.push_str("<p>None.</p>\n");
    }
    let mut n = 0;
    for site in shown {
        n += 1;
        finding(out, n, site, false);
        let following = followers.remove(site.id.as_str()).unwrap_or_default();
        if !following.is_empty() {
            let _ = writeln!(
                out,
                "<details class=\"consequences\"><summary>{} following from it</summary>",
                following.len()
            );
            for follower in following {
                n += 1;
                finding(out, n, follower, outside(follower));
            }
            out.push_str("</details>\n");
        }
    }
    let mut components: Vec<(String, Vec<&Site>)> = Vec::new();
    for site in sites
        .iter()
        .filter(|s| s.consequence_of.is_none() && outside(s))
    {
        let component = site
            .owner
            .as_ref()
            .map_or_else(|| "unknown".to_string(), |o| o.component.clone());
        match components.iter_mut().find(|(c, _)| *c == component) {
            Some((_, list)) => list.push(site),
            None => components.push((component, vec![site])),
        }
    }
    if !components.is_empty() {
        out.push_str("<h3>Inside framework and library code, not gating (--gate-scope all counts them)</h3>\n");
    }
    for (component, list) in components {
        let _ = writeln!(
            out,
            "<details class=\"library\"><summary>{}: {}</summary>",
            escape_markup(&component),
            crate::words::plural(list.len() as u64, "site")
        );
        for site in list {
            n += 1;
            finding(out, n, site, true);
        }
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

// Over 100 lines on purpose: one finding's HTML in document order, each block a
// few lines.
fn finding(out: &mut String, n: usize, site: &Site, out_of_scope: bool) {
    let severity = match site.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    };
    let accepted = site.suppressed.is_some() || site.in_baseline;
    let _ = writeln!(
        out,
        "<article class=\"finding {severity}{}\" id=\"{}\">\n<h3>{n}. <span class=\"badge {severity}\">{severity}</span> {} <span class=\"mono\">{}</span> · {}</h3>",
        if accepted { " accepted" } else { "" },
        escape_markup(&site.id),
        escape_markup(&site.message),
        escape_markup(site.kind.id()),
        site.tool.name()
    );
    out.push_str("<dl>\n");
    let mut row = |name: &str, value: String| {
        if !value.is_empty() {
            let _ = writeln!(out, "<dt>{name}</dt><dd>{value}</dd>");
        }
    };
    row(
        "kernel",
        site.kernel
            .as_deref()
            .map(|k| format!("<code>{}</code>", escape_markup(k)))
            .unwrap_or_default(),
    );
    row(
        "where",
        site.location
            .as_ref()
            .map(|l| format!("<code>{}</code>", escape_markup(&place(l))))
            .unwrap_or_default(),
    );
    row("count", site.count_text());
    row(
        "level",
        super::describe::raised_severity(site)
            .map(|why| escape_markup(&why))
            .unwrap_or_default(),
    );
    row(
        "doubt",
        site.doubt.as_deref().map(escape_markup).unwrap_or_default(),
    );
    row(
        "owner",
        site.owner
            .as_ref()
            .map(|o| {
                let scope = if out_of_scope { ", not gating" } else { "" };
                escape_markup(&format!(
                    "{} ({}{scope}): {}",
                    o.owner.name(),
                    o.component,
                    o.because
                ))
            })
            .unwrap_or_default(),
    );
    row(
        "follows",
        site.consequence_of
            .as_deref()
            .map(|root| {
                format!(
                    "<a href=\"#{0}\">{0}</a> (the root cause)",
                    escape_markup(root)
                )
            })
            .unwrap_or_default(),
    );
    row(
        "threads",
        site.samples
            .iter()
            .take(3)
            .map(|s| escape_markup(&describe::sample_line(s)))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("<br>"),
    );
    if let Some(other) = &site.other {
        let at = other
            .location
            .as_ref()
            .map(|l| format!(" at <code>{}</code>", escape_markup(&place(l))))
            .unwrap_or_default();
        row(
            "other access",
            format!("{}{at}", escape_markup(&other.access)),
        );
    }
    row(
        "hazards",
        site.hazards.map(|h| h.to_string()).unwrap_or_default(),
    );
    row(
        "bytes",
        site.bytes.map(|b| b.to_string()).unwrap_or_default(),
    );
    row(
        "error",
        site.error.as_deref().map(escape_markup).unwrap_or_default(),
    );
    row(
        "processes",
        describe::processes_line(site)
            .map(|p| escape_markup(&p))
            .unwrap_or_default(),
    );
    row(
        "also seen by",
        describe::seen_by_line(site).unwrap_or_default(),
    );
    row(
        "launched from",
        describe::launched_from(site)
            .map(|f| {
                format!(
                    "<code>{}</code>{}",
                    escape_markup(&frame(&f)),
                    describe::seen_by_note(site)
                )
            })
            .unwrap_or_default(),
    );
    row(
        "suppressed",
        site.suppressed
            .as_deref()
            .map(escape_markup)
            .unwrap_or_default(),
    );
    if site.in_baseline {
        row("baseline", "already in the baseline report".into());
    }
    // Last, so the kernel stays the row's first `<code>`.
    let (topic, link) = super::describe::explanation(site);
    row(
        "explain",
        match link {
            Some(link) => format!(
                "<a href=\"{}\">{}</a> (<code>cudawatch explain {}</code>)",
                escape_markup(&link),
                escape_markup(&topic),
                escape_markup(&topic)
            ),
            None => format!("<code>cudawatch explain {}</code>", escape_markup(&topic)),
        },
    );
    out.push_str("</dl>\n");
    if site.host_frames.len() > 1 {
        let _ = write!(
            out,
            "<details><summary>host backtrace ({} frames)</summary><ol class=\"mono\">",
            site.host_frames.len()
        );
        for frame in &site.host_frames {
            let _ = write!(out, "<li>{}</li>", escape_markup(&self::frame(frame)));
        }
        out.push_str("</ol></details>\n");
    }
    if let (Some(location), Some(snippet)) = (&site.location, &site.snippet) {
        out.push_str("<pre class=\"snippet\">");
        for (line, text) in (snippet.first_line..).zip(&snippet.lines) {
            let class = if line == location.line {
                " class=\"hit\""
            } else {
                ""
            };
            let _ = write!(
                out,
                "<span{class}>{line:>5} | {}</span>",
                escape_markup(text)
            );
        }
        out.push_str("</pre>\n");
    }
    out.push_str("</article>\n");
}

/// The memory stage's account, as the terminal says it.
fn memory(out: &mut String, report: &Report) {
    let Some(memory) = report.memory.as_ref() else {
        return;
    };
    let lines = super::memory::cleaned_lines(memory);
    if lines.is_empty() {
        return;
    }
    out.push_str("<section id=\"memory\">\n<h2>GPU memory (PyTorch's allocator)</h2>\n<pre>");
    for line in lines {
        out.push_str(&escape_markup(&line));
        out.push('\n');
    }
    out.push_str("</pre>\n</section>\n");
}

fn coalescing(out: &mut String, kernels: &[KernelCoalescing], lines: &[LineSectors]) {
    if kernels.is_empty() {
        return;
    }
    out.push_str("<section id=\"coalescing\">\n<h2>Global-memory coalescing per kernel</h2>\n");
    out.push_str(
        "<p class=\"legend\">Share of each kernel's global sectors:<span class=\"used\" style=\"background:#90a4ae\"></span>needed\
         <span style=\"background:#c62828\"></span>wasted (beyond the ideal for its access width)</p>\n",
    );
    // Worst first, as in the terminal table: the kernel to fix leads.
    let mut kernels: Vec<&KernelCoalescing> = kernels.iter().collect();
    kernels.sort_by(|a, b| {
        let waste = |k: &KernelCoalescing| k.excessive_pct().unwrap_or(-1.0);
        waste(b).total_cmp(&waste(a))
    });
    out.push_str(&chart(&kernels));
    out.push_str(
        "<table>\n<thead><tr><th>kernel</th><th>grid × block</th><th>loads sectors/request</th>\
         <th>stores sectors/request</th><th>ideal</th><th>wasted</th></tr></thead>\n<tbody>\n",
    );
    for k in &kernels {
        let f = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1}"));
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape_markup(&k.kernel),
            if k.shape_known() {
                format!("{} × {}", escape_markup(&k.grid), escape_markup(&k.block))
            } else {
                "-".to_string()
            },
            f(k.load.sectors_per_request()),
            f(k.store.sectors_per_request()),
            f(k.ideal_sectors_per_request),
            k.excessive_pct()
                .map_or_else(|| "-".into(), |p| format!("{p:.0}%"))
        );
    }
    out.push_str("</tbody>\n</table>\n");
    if !lines.is_empty() {
        out.push_str(
            "<h3>Source lines that waste the most sectors</h3>\n<table>\n<thead><tr><th>where</th>\
             <th>kernel</th><th>wasted</th><th>access</th><th>source</th></tr></thead>\n<tbody>\n",
        );
        for l in lines.iter().take(20) {
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{} sectors ({})</td><td>{}</td><td><code>{}</code></td></tr>",
                escape_markup(&place(&l.location)),
                escape_markup(&l.kernel),
                l.excessive_sectors,
                l.excessive_pct()
                    .map_or_else(|| "-".into(), |p| format!("{p:.0}%")),
                escape_markup(&l.access),
                escape_markup(&l.source)
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out.push_str("</section>\n");
}

/// One horizontal bar per kernel: the needed share of its sectors, then
/// the wasted share, with sectors per request beside it.
fn chart(kernels: &[&KernelCoalescing]) -> String {
    const WIDTH: f64 = 1000.0;
    const BAR: f64 = 600.0;
    const ROW: f64 = 46.0;
    let height = ROW * kernels.len() as f64 + 8.0;
    let mut svg = format!(
        "<svg class=\"chart\" role=\"img\" aria-label=\"Wasted global sectors per kernel\" \
         viewBox=\"0 0 {WIDTH} {height}\" width=\"100%\" xmlns=\"http://www.w3.org/2000/svg\">\n"
    );
    for (i, k) in kernels.iter().enumerate() {
        let y = 4.0 + ROW * i as f64;
        let name = crate::words::shorten(&k.kernel, 110);
        let _ = writeln!(
            svg,
            "<g class=\"kernel\" data-kernel=\"{}\"><title>{}</title>\n<text class=\"label\" x=\"0\" y=\"{}\">{}</text>",
            escape_markup(&k.kernel),
            escape_markup(&k.kernel),
            y + 13.0,
            escape_markup(&name)
        );
        let bar_y = y + 19.0;
        match k.excessive_pct() {
            Some(pct) => {
                let wasted = BAR * pct.clamp(0.0, 100.0) / 100.0;
                let _ = writeln!(
                    svg,
                    "<rect class=\"used\" x=\"0\" y=\"{bar_y}\" width=\"{:.1}\" height=\"16\"/>\
                     <rect class=\"wasted\" x=\"{:.1}\" y=\"{bar_y}\" width=\"{wasted:.1}\" height=\"16\" data-pct=\"{pct:.1}\"/>",
                    BAR - wasted,
                    BAR - wasted
                );
                let spr = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1}"));
                let _ = writeln!(
                    svg,
                    "<text x=\"{}\" y=\"{}\">{pct:.0}% wasted · sectors/request ld {} st {} (ideal {})</text>",
                    BAR + 10.0,
                    bar_y + 12.5,
                    spr(k.load.sectors_per_request()),
                    spr(k.store.sectors_per_request()),
                    spr(k.ideal_sectors_per_request)
                );
            }
            None => {
                let _ = writeln!(
                    svg,
                    "<rect class=\"unknown\" x=\"0\" y=\"{bar_y}\" width=\"{BAR}\" height=\"16\"/>\
                     <text x=\"{}\" y=\"{}\">no sector totals (SourceCounters)</text>",
                    BAR + 10.0,
                    bar_y + 12.5
                );
            }
        }
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    svg
}

/// The warnings, or the notes: a section of `source: message` items.
fn listed(out: &mut String, id: &str, title: &str, items: &[cudawatch_model::Warning]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "<section id=\"{id}\">\n<h2>{title}</h2>\n<ul>");
    for w in items {
        let _ = writeln!(
            out,
            "<li><strong>{}</strong>: {}</li>",
            escape_markup(&w.source),
            escape_markup(&w.message)
        );
    }
    out.push_str("</ul>\n</section>\n");
}

/// Where the run ran, every check doctor made: the page is read by
/// someone who did not see the run's warnings (the terminal names only
/// what is not ok).
fn environment(out: &mut String, env: Option<&cudawatch_model::Environment>) {
    let Some(env) = env else {
        return;
    };
    let _ = writeln!(
        out,
        "<section id=\"environment\">\n<h2>Environment</h2>\n<p>{}</p>\n<table>\n\
         <thead><tr><th>check</th><th>status</th><th>detail</th></tr></thead>\n<tbody>",
        escape_markup(&super::doctor::summary(env))
    );
    for check in &env.checks {
        let status = check.status.name();
        let _ = writeln!(
            out,
            "<tr data-check=\"{}\"><td>{}</td><td><span class=\"badge {}\">{status}</span></td><td>{}</td></tr>",
            escape_markup(&check.id),
            escape_markup(&check.title),
            badge_class(check.status),
            escape_markup(&super::doctor::detail_and_fix(check))
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

/// The badge colour of a doctor check: ok as a pass, a problem as a failure.
fn badge_class(status: cudawatch_model::EnvStatus) -> &'static str {
    match status {
        cudawatch_model::EnvStatus::Ok => "pass",
        cudawatch_model::EnvStatus::Skipped => "skipped",
        cudawatch_model::EnvStatus::Warning => "warning",
        cudawatch_model::EnvStatus::Problem => "fail",
    }
}

/// A source position as the page shows it: a project file without the
/// report's `./` (`src/kern.cu:12`), as the terminal and SARIF show it;
/// other files whole. Unlike the terminal, never relative to where the page
/// was rendered: the page is shared.
fn place(location: &cudawatch_model::SourceLocation) -> String {
    location.shown()
}

/// A frame as the page shows it, its file as [`place`] shows one.
fn frame(frame: &cudawatch_model::Frame) -> String {
    describe::frame_with_file(frame, project_file)
}

fn project_file(file: &str) -> String {
    cudawatch_model::in_project(file)
        .unwrap_or(file)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudawatch_model::{FindingKind, Tool};
    use cudawatch_parsers::site::new_site;

    #[test]
    fn markup_in_names_is_escaped_everywhere() {
        let mut report = Report::new("0.1.0");
        report.target = vec!["<b>prog</b>".into()];
        let mut site = new_site(
            Tool::Memcheck,
            FindingKind::InvalidAccess,
            Severity::Error,
            "write of size 4 \"<img src=x onerror=alert(1)>\"".into(),
        );
        site.kernel = Some("<script>alert(1)</script>".into());
        report.findings.push(site);
        report.coalescing.push(KernelCoalescing {
            kernel: "<script>alert(2)</script>".into(),
            ..KernelCoalescing::default()
        });
        let html = String::from_utf8(HtmlExporter.render(&Judged {
            report: &report,
            judgement: &Judgement {
                checklist: Vec::new(),
                verdict: vec![cudawatch_model::VerdictLine {
                    label: VerdictLabel::Findings,
                    text: "<script>alert(3)</script>".into(),
                }],
                exit_code: 1,
                out_of_scope: Vec::new(),
                gating: Vec::new(),
            },
        }))
        .unwrap();
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<b>prog"), "{html}");
        assert!(html.contains("<title>cudawatch: &lt;b&gt;prog&lt;/b&gt;</title>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("data-kernel=\"&lt;script&gt;alert(2)&lt;/script&gt;\""));
    }
}
