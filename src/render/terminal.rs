//! The human report: tables for stages, findings by site, coalescing per
//! kernel and the lines that waste sectors, then the details of the worst
//! findings with their source in context where the file is readable.

use std::fmt::Write as _;

use super::describe;
use super::style::Style;
use super::text::Table;
use crate::words::shorten;
use cudawatch_model::{
    Frame, Judgement, KernelCoalescing, Report, Severity, Site, VerdictLabel, Warning,
};

/// How many findings get a detailed paragraph under the table.
const DETAILED: usize = 5;
/// Widest kernel or message cell before it is shortened.
const CELL: usize = 48;

/// The whole human report as a string.
/// Below this many columns the findings are a list, not a table: nine
/// columns wrapped into 80 read as noise.
const NARROW: usize = 110;

/// The whole human report as a string, its tables fitted to `width`
/// columns (unlimited when `None`: a file or a pipe).
// Over 100 lines on purpose: the report's sections in printed order, each a
// call.
pub fn render(
    report: &Report,
    judgement: &Judgement,
    style: Style,
    width: Option<usize>,
    environment_said: &[String],
) -> String {
    // Everything below prints text from tools and captures: cleaned once.
    let (report, judgement) = super::untrusted::neutralise(report, judgement);
    let (report, judgement) = (&report, &judgement);
    let mut out = String::new();
    let mut notes = Notes::default();
    if !report.target.is_empty() {
        let _ = writeln!(
            out,
            "{} {}",
            style.bold("cudawatch:"),
            // Quoted as a shell would take it back, so it can be copied.
            report
                .target
                .iter()
                .map(|a| shlex::try_quote(a).map_or_else(|_| a.clone(), |q| q.into_owned()))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    if !report.stages.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Stages"));
        out.push_str(&stages_table(report, width, &mut notes));
    }
    // What the user can act on first; library and framework internals
    // outside the gate's scope are folded into one line per component.
    // Consequences are listed under their root cause, not beside it.
    let (shown, folded): (Vec<&Site>, Vec<&Site>) = report
        .findings
        .iter()
        .filter(|s| s.consequence_of.is_none())
        .partition(|s| describe::is_listed(s, &judgement.out_of_scope));
    let _ = writeln!(
        out,
        "\n{}",
        style.bold(&format!("Findings by site ({})", shown.len()))
    );
    if shown.is_empty() {
        let _ = writeln!(out, "  none");
    } else {
        if width.is_some_and(|w| w < NARROW) {
            out.push_str(&findings_list(&shown));
        } else {
            out.push_str(&findings_table(&shown, width));
        }
        for (i, site) in shown.iter().take(DETAILED).enumerate() {
            out.push_str(&site_details(i + 1, site, style, width));
            out.push_str(&followers(report, site));
        }
        if shown.len() > DETAILED {
            let _ = writeln!(
                out,
                "  … {} more sites in the JSON report",
                shown.len() - DETAILED
            );
        }
    }
    if !folded.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold(&format!(
                "Inside framework and library code, not gating ({}; --gate-scope all counts them)",
                crate::words::plural(folded.len() as u64, "site")
            ))
        );
        out.push_str(&folded_lines(&folded));
    }
    if let Some(memory) = report.memory.as_ref() {
        let section = super::memory::section(memory);
        if !section.is_empty() {
            let _ = writeln!(
                out,
                "\n{}",
                style.bold("GPU memory (PyTorch's allocator, memory stage)")
            );
            out.push_str(&section);
        }
    }
    if !report.coalescing.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold("Global-memory coalescing per kernel launch")
        );
        out.push_str(&coalescing_table(&report.coalescing, width));
    }
    if !report.wasteful_lines.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold("Source lines that waste the most sectors")
        );
        out.push_str(&lines_table(report, width));
    }
    if !judgement.checklist.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Pre-deployment checklist"));
        let mut t = Table::new(["check", "status", "evidence"]);
        for item in &judgement.checklist {
            t.row([
                item.title.clone(),
                item.status.name().to_string(),
                shorten(&notes.refer(&item.evidence), 80),
            ]);
        }
        out.push_str(&t.render(width));
    }
    if !report.warnings.is_empty() {
        let _ = writeln!(out, "\n{}", style.warn("Warnings"));
        for w in Warning::grouped(&report.warnings) {
            let _ = writeln!(out, "  - {}: {}", w.source, w.message);
        }
    }
    if !report.notes.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Notes"));
        for n in &report.notes {
            let _ = writeln!(out, "  - {}: {}", n.source, style.dim(&n.message));
        }
    }
    if let Some(env) = &report.environment {
        // What doctor found that is not ok; the rest is in the JSON.
        let _ = writeln!(
            out,
            "\n{} {}",
            style.bold("Environment:"),
            super::doctor::summary(env)
        );
        // A live run said its problems as warnings before the stages:
        // they are named here, not repeated.
        let said = |c: &&cudawatch_model::EnvCheck| environment_said.contains(&c.id);
        let titles: Vec<&str> = env
            .checks
            .iter()
            .filter(said)
            .map(|c| c.title.as_str())
            .collect();
        if !titles.is_empty() {
            let _ = writeln!(out, "  - said above: {}", titles.join(", "));
        }
        for c in env
            .checks
            .iter()
            .filter(|c| c.status >= cudawatch_model::EnvStatus::Warning && !said(c))
        {
            let _ = writeln!(
                out,
                "  - {} {}: {}",
                c.status.name(),
                c.title,
                notes.refer(&c.detail)
            );
        }
    }
    out.push('\n');
    out.push_str(&verdict(judgement, style));
    // Fitted to `width` by the caller (`render::write_human`), line by line.
    out
}

/// `    followed by: memcheck api_error: cudaDeviceSynchronize returned ... ×1`
/// for each site that follows `root`.
fn followers(report: &Report, root: &Site) -> String {
    let mut out = String::new();
    for site in report
        .findings
        .iter()
        .filter(|s| s.consequence_of.as_deref() == Some(root.id.as_str()))
    {
        let at = site
            .location
            .as_ref()
            .map(|l| format!(" at {}", short_path(&l.file, l.line)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    followed by: {} {}{at}: {} ×{}",
            site.tool.name(),
            site.kind.id(),
            shorten(&site.message, 90),
            site.count_text()
        );
    }
    out
}

/// One line per component: `cuDNN: 3 sites (uninitialized_read ×14007, race ×1)`.
fn folded_lines(sites: &[&Site]) -> String {
    let mut by_component: Vec<(String, Vec<&Site>)> = Vec::new();
    for site in sites {
        let component = site
            .owner
            .as_ref()
            .map_or_else(|| "unknown".to_string(), |o| o.component.clone());
        match by_component.iter_mut().find(|(c, _)| *c == component) {
            Some((_, list)) => list.push(site),
            None => by_component.push((component, vec![site])),
        }
    }
    let mut out = String::new();
    for (component, list) in by_component {
        let mut kinds: Vec<(&str, u64)> = Vec::new();
        for site in &list {
            match kinds.iter_mut().find(|(k, _)| *k == site.kind.id()) {
                Some((_, n)) => *n += site.count,
                None => kinds.push((site.kind.id(), site.count)),
            }
        }
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        let _ = writeln!(
            out,
            "  {component}: {} ({})",
            crate::words::plural(list.len() as u64, "site"),
            kinds.join(", ")
        );
    }
    // Said once for all the folded sites it applies to (the text is the
    // same for each: it names the run's kernel, not the site's).
    let doubted: Vec<&&Site> = sites.iter().filter(|s| s.doubt.is_some()).collect();
    if let Some(doubt) = doubted.first().and_then(|s| s.doubt.as_deref()) {
        let _ = writeln!(
            out,
            "  doubt ({}): {doubt}",
            crate::words::plural(doubted.len() as u64, "site")
        );
    }
    out
}

/// The findings as a list, for a narrow terminal: one block per site.
fn findings_list(sites: &[&Site]) -> String {
    let mut out = String::new();
    for (i, site) in sites.iter().enumerate() {
        let owner = site
            .owner
            .as_ref()
            .map(|o| format!(" ({})", o.component))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}. {} {}{owner} ×{}",
            i + 1,
            site.tool.name(),
            site.kind.id(),
            site.count_text()
        );
        if let Some(kernel) = &site.kernel {
            let _ = writeln!(out, "     kernel {}", shorten(kernel, 60));
        }
        if let Some(l) = &site.location {
            let _ = writeln!(out, "     at {}", short_path(&l.file, l.line));
        }
        if let Some(frame) = describe::launched_from(site) {
            let _ = writeln!(
                out,
                "     launched from {}",
                shorten(&short_frame(&frame), 60)
            );
        }
    }
    out
}

/// Widest reason in the stages table; a longer one is a numbered note
/// under it, said once, and referred to by its number after.
const REASON: usize = 60;

/// Stage reasons too long for a table cell: said once under the stages
/// table, referred to by number in the checklist and the environment.
#[derive(Default)]
struct Notes {
    reasons: Vec<String>,
}

impl Notes {
    /// The note's number for `reason`, added if new.
    fn number(&mut self, reason: &str) -> usize {
        match self.reasons.iter().position(|r| r == reason) {
            Some(i) => i + 1,
            None => {
                self.reasons.push(reason.to_string());
                self.reasons.len()
            }
        }
    }

    /// `text` with every noted reason in it replaced by its number.
    fn refer(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (i, reason) in self.reasons.iter().enumerate() {
            out = out.replace(reason.as_str(), &format!("see [{}] above", i + 1));
        }
        out
    }
}

/// Below this width the stages are a list, as the findings are below
/// `NARROW`: at 60 columns the table's "why" was 11 characters wide and
/// each stage took 5 to 7 lines.
const LIST_BELOW: usize = 80;

/// The stages as a list, for a narrow terminal: `plain: clean (exit 0,
/// 0.3s)` and its reason under it.
/// A reason cut to the table's cell is whole here: the list wraps it.
fn stages_list(rows: &[([String; 5], String)]) -> String {
    let mut out = String::new();
    for ([stage, outcome, cell, exit, time], whole) in rows {
        let why = if cell.ends_with(']') { cell } else { whole };
        let _ = writeln!(out, "  {stage}: {outcome} ({exit}, {time})");
        let _ = writeln!(out, "    {why}");
    }
    out
}

fn stages_table(report: &Report, width: Option<usize>, notes: &mut Notes) -> String {
    let mut rows: Vec<([String; 5], String)> = Vec::new();
    // The remedy is usually the reason's second half ("install the CUDA
    // toolkit or pass --compute-sanitizer"): never cut off, but said once.
    let mut noted: Vec<(usize, Vec<&str>)> = Vec::new();
    for stage in report.stages.iter().filter(|s| !s.not_needed()) {
        let why = stage_why(stage);
        let cell =
            if why.chars().count() > REASON && stage.outcome != cudawatch_model::Outcome::Clean {
                let n = notes.number(&stage.reason);
                match noted.iter_mut().find(|(m, _)| *m == n) {
                    Some((_, tools)) => tools.push(stage.tool.name()),
                    None => noted.push((n, vec![stage.tool.name()])),
                }
                format!("{} [{n}]", head(&why))
            } else {
                shorten(&why, REASON)
            };
        rows.push((
            [
                stage.tool.name().to_string(),
                stage.shown_outcome().to_string(),
                cell,
                stage.end.map(|e| e.to_string()).unwrap_or_default(),
                stage
                    .seconds
                    .map(|s| format!("{s:.1}s"))
                    .unwrap_or_default(),
            ],
            why,
        ));
    }
    let mut out = if width.is_some_and(|w| w < LIST_BELOW) {
        stages_list(&rows)
    } else {
        let mut t = Table::new(["stage", "outcome", "why", "exit", "time"]);
        for (row, _) in rows {
            t.row(row);
        }
        t.render(width)
    };
    // Out of the table, which is for what checked the program, but named:
    // every other format lists these stages too.
    for stage in report.stages.iter().filter(|s| s.not_needed()) {
        let why = stage.reason.trim_start_matches(cudawatch_model::NOT_NEEDED);
        let _ = writeln!(out, "  {} not needed:{why}", stage.tool.name());
    }
    for stage in report.stages.iter().filter(|s| !s.stderr_tail.is_empty()) {
        let _ = writeln!(
            out,
            "  The program's last lines on stderr ({}/stderr in the run directory has it all):",
            stage.tool.name()
        );
        for line in &stage.stderr_tail {
            let _ = writeln!(out, "    | {line}");
        }
    }
    for (n, tools) in noted {
        let _ = writeln!(
            out,
            "  [{n}] {}: {}",
            tools.join(", "),
            notes.reasons[n - 1]
        );
    }
    out
}

/// The stage's reason, with the program's peak GPU memory where it was sampled.
fn stage_why(stage: &cudawatch_model::StageReport) -> String {
    match stage.gpu_memory_mib {
        Some((peak, total)) => format!(
            "{}; peak GPU memory {peak} of {total} MiB",
            stage.shown_reason()
        ),
        None => stage.shown_reason(),
    }
}

fn findings_table(sites: &[&Site], width: Option<usize>) -> String {
    let mut t = Table::new([
        "#",
        "tool",
        "kind",
        "owner",
        "kernel",
        "where",
        "count",
        "thread/block",
        "launched from",
    ]);
    for (i, site) in sites.iter().enumerate() {
        let mut kind = site.kind.id().to_string();
        if site.severity == Severity::Warning {
            kind.push_str(" (warn)");
        }
        if site.suppressed.is_some() {
            kind.push_str(" (suppressed)");
        }
        if site.in_baseline {
            kind.push_str(" (baseline)");
        }
        t.row([
            (i + 1).to_string(),
            site.tool.name().to_string(),
            kind,
            site.owner
                .as_ref()
                .map_or_else(|| "-".into(), |o| shorten(&o.component, 16)),
            shorten(site.kernel.as_deref().unwrap_or("-"), CELL),
            site.location
                .as_ref()
                .map(|l| short_path(&l.file, l.line))
                .unwrap_or_else(|| "-".into()),
            site.count_text(),
            sample(site),
            describe::launched_from(site)
                .map(|f| shorten(&short_frame(&f), 36))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    t.render(width)
}

fn sample(site: &Site) -> String {
    site.samples
        .first()
        .map(|s| match (s.thread, s.block) {
            (Some(t), Some(b)) => format!("{t} in {b}"),
            (Some(t), None) => t.to_string(),
            (None, Some(b)) => format!("block {b}"),
            _ => "-".into(),
        })
        .unwrap_or_else(|| "-".into())
}

fn short_frame(frame: &Frame) -> String {
    match (&frame.file, frame.line) {
        (Some(file), Some(line)) => format!(
            "{} {}",
            frame.func.as_deref().unwrap_or("?"),
            short_path(file, line)
        ),
        _ => frame.to_string(),
    }
}

// Over 100 lines on purpose: one site's lines in printed order.
fn site_details(n: usize, site: &Site, style: Style, width: Option<usize>) -> String {
    let mut out = String::new();
    let label = match site.severity {
        Severity::Error => style.bad(&format!("[{n}]")),
        Severity::Warning => style.warn(&format!("[{n}]")),
        Severity::Note => style.dim(&format!("[{n}]")),
    };
    let _ = writeln!(out, "\n{label} {} ×{}", site.message, site.count_text());
    if let Some(location) = &site.location {
        let kernel = site
            .kernel
            .as_deref()
            .map(|k| format!(" in {}", shorten(k, 60)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    at {}:{}{kernel}",
            describe::from_here(&location.file),
            location.line
        );
        if let Some(tmp) = &site.runtime_source {
            let _ = writeln!(
                out,
                "    compiled at run time from {tmp}: the source string is at this line"
            );
        }
        if let Some(inlined) = &site.inlined {
            let _ = writeln!(out, "    {}", describe::inlined_line(inlined));
        }
        if !site.pcs.is_empty() {
            let _ = writeln!(out, "    {}", describe::pcs_line(&site.pcs));
        }
    } else if let Some(kernel) = &site.kernel {
        // No source line (library kernels, a build without -lineinfo): the
        // kernel is still named.
        let _ = writeln!(out, "    in kernel {}", shorten(kernel, 90));
    }
    if let Some(other) = &site.other
        && let Some(location) = &other.location
    {
        let _ = writeln!(out, "    other access: {} at {location}", other.access);
    }
    if let Some(hazards) = site.hazards {
        let _ = writeln!(out, "    {hazards} hazards");
    }
    if let Some(why) = describe::raised_severity(site) {
        let _ = writeln!(out, "    {why}");
    }
    if let Some(doubt) = &site.doubt {
        let _ = writeln!(out, "    doubt: {doubt}");
    }
    if let Some(bytes) = site.bytes {
        let _ = writeln!(out, "    {bytes} bytes");
    }
    for s in site.samples.iter().take(3) {
        let line = describe::sample_line(s);
        if !line.is_empty() {
            let _ = writeln!(out, "    {line}");
        }
    }
    if let Some(frame) = &site.python_frame {
        let _ = writeln!(
            out,
            "    python: {}{}",
            describe::frame_from_here(frame),
            describe::seen_by_note(site)
        );
    }
    if let Some(processes) = describe::processes_line(site) {
        let _ = writeln!(out, "    in: {processes}");
    }
    if let Some(tools) = describe::seen_by_line(site) {
        let _ = writeln!(out, "    also seen by: {tools}");
    }
    if let Some(only) = &site.only_in_try {
        let _ = writeln!(out, "    only in: {only}");
    }
    let (topic, _) = describe::explanation(site);
    let _ = writeln!(
        out,
        "    {}",
        style.dim(&format!("explain: cudawatch explain {topic}"))
    );
    // What `cudawatch suppress` takes, without a trip into the JSON.
    let _ = writeln!(
        out,
        "    {}",
        style.dim(&format!("id: {}", super::untrusted::clean(&site.id)))
    );
    if let Some(frame) = &site.launch_frame {
        let _ = writeln!(out, "    host: {frame}{}", describe::seen_by_note(site));
    }
    if let (Some(location), Some(snippet)) = (&site.location, &site.snippet) {
        for (n, content) in (snippet.first_line..).zip(&snippet.lines) {
            let marker = if n == location.line { ">" } else { " " };
            // Source is cut, not wrapped: a wrapped line of code reads as two.
            let line = format!("    {marker} {n:>5} | {content}");
            let line = match width {
                Some(w) => shorten(&line, w),
                None => line,
            };
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// Launches the coalescing table shows on a terminal, worst first; the
/// JSON and HTML reports have them all.
const LAUNCHES_SHOWN: usize = 20;

// Over 100 lines on purpose: one table: its columns, their widths and its
// footnote.
fn coalescing_table(kernels: &[KernelCoalescing], width: Option<usize>) -> String {
    // On a narrow terminal: short headers, no time column, the kernel's
    // simple name (templates kept, parameters dropped), which still tells
    // kernels apart; one line a launch.
    let narrow = width.is_some_and(|w| w < NARROW);
    // The launching line, where ncu recorded call stacks: what a model
    // author can act on (issue 21).
    let stacks = !narrow && kernels.iter().any(|k| k.launched_from.is_some());
    let mut header: Vec<&str> = if narrow {
        vec![
            "kernel", "launch", "ld/req", "st/req", "ideal", "used", "wasted",
        ]
    } else {
        vec![
            "kernel",
            "grid x block",
            "ld sect/req",
            "st sect/req",
            "ideal",
            "ld bytes used",
            "wasted sectors",
            "time",
        ]
    };
    if stacks {
        header.push("launched from");
    }
    let mut t = Table::new(header);
    let mut sorted: Vec<&KernelCoalescing> = kernels.iter().collect();
    sorted.sort_by(|a, b| {
        b.excessive_pct()
            .unwrap_or(0.0)
            .total_cmp(&a.excessive_pct().unwrap_or(0.0))
    });
    let shown = if width.is_some() {
        LAUNCHES_SHOWN
    } else {
        usize::MAX
    };
    let rows: Vec<&&KernelCoalescing> = sorted.iter().take(shown).collect();
    let names: Vec<&str> = rows
        .iter()
        .map(|k| {
            if narrow {
                cudawatch_parsers::site::simple_kernel_name(&k.kernel)
            } else {
                k.kernel.as_str()
            }
        })
        .collect();
    let cells = describe::shorten_distinct(&names, if narrow { 18 } else { CELL });
    for (k, kernel) in rows.into_iter().zip(cells) {
        let mut row = vec![
            kernel,
            if !k.shape_known() {
                "-".to_string()
            } else if narrow {
                format!("{}×{}", dims(&k.grid), dims(&k.block))
            } else {
                format!("{} x {}", dims(&k.grid), dims(&k.block))
            },
            num(k.load.sectors_per_request(), 1),
            num(k.store.sectors_per_request(), 1),
            num(k.ideal_sectors_per_request, 1),
            // A kernel without loads has no "bytes used" share: 0.0% would
            // read as a kernel wasting all it loads.
            k.load
                .bytes_used_pct
                .filter(|_| k.load.requests.is_some_and(|r| r > 0.0))
                .map(|p| format!("{p:.1}%"))
                .unwrap_or_else(|| "-".into()),
            k.excessive_pct()
                .map(|p| format!("{p:.0}%"))
                .unwrap_or_else(|| "-".into()),
        ];
        if !narrow {
            row.push(
                k.duration_ns
                    .map(|d| format!("{:.1} µs", d / 1000.0))
                    .unwrap_or_else(|| "-".into()),
            );
        }
        if stacks {
            row.push(
                k.launched_from
                    .as_ref()
                    .map_or_else(|| "-".into(), |f| shorten(&short_frame(f), 40)),
            );
        }
        t.row(row);
    }
    let mut out = t.render(width);
    // A "-" there is not a missing measurement of ours: ncu's share covers
    // LDG loads only (docs/tool-surprises.md, "bytes used").
    let unshared = |k: &&KernelCoalescing| {
        k.load.requests.is_some_and(|r| r > 0.0) && k.load.bytes_used_pct.is_none()
    };
    if sorted.iter().take(shown).any(unshared) {
        let _ = writeln!(
            out,
            "  \"-\" under bytes used: ncu's share counts plain loads (LDG) only, not cp.async \
             loads such as a multistage GEMM's"
        );
    }
    if sorted.len() > shown {
        let _ = writeln!(
            out,
            "  … {} more launches, less wasteful, in the JSON and HTML reports",
            sorted.len() - shown
        );
    }
    out
}

fn lines_table(report: &Report, width: Option<usize>) -> String {
    let mut t = Table::new([
        "where",
        "kernel",
        "excessive sectors",
        "of its sectors",
        "access",
        "source",
    ]);
    let lines: Vec<_> = report.wasteful_lines.iter().take(10).collect();
    let kernels: Vec<&str> = lines.iter().map(|l| l.kernel.as_str()).collect();
    let kernel_cells = describe::shorten_distinct(&kernels, 32);
    for (l, kernel) in lines.into_iter().zip(kernel_cells) {
        let share = l
            .excessive_pct()
            .map_or_else(|| "-".into(), |p| format!("{p:.0}%"));
        t.row([
            short_path(&l.location.file, l.location.line),
            kernel,
            format!("{:.0}", l.excessive_sectors),
            share,
            l.access.clone(),
            shorten(&l.source, 50),
        ]);
    }
    t.render(width)
}

/// The verdict's lines, labelled: the whole human report's last lines, and
/// all of it beside a machine report on stdout.
pub fn verdict(judgement: &Judgement, style: Style) -> String {
    let mut out = String::new();
    for line in &judgement.verdict {
        let heading = line.label.heading();
        let label = match line.label {
            VerdictLabel::Clean | VerdictLabel::Passed => style.good(heading),
            VerdictLabel::Findings | VerdictLabel::Failed => style.bad(heading),
            VerdictLabel::Inconclusive | VerdictLabel::Interrupted => style.warn(heading),
        };
        let _ = writeln!(out, "{label} {}", line.text);
    }
    out
}

fn num(value: Option<f64>, decimals: usize) -> String {
    value
        .map(|v| format!("{v:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

/// Where a finding is, in a table or list: a file of the project as a
/// compiler shows it when it is short (`tests/gpu/oob_write.cu:6`,
/// `train.py:12`), else its last two components (`…/cuda/Loss.cu:245`).
fn short_path(file: &str, line: u32) -> String {
    let shown = super::describe::from_here(file);
    let depth = shown.split('/').count();
    if !shown.starts_with('/') && depth <= 3 {
        return format!("{shown}:{line}");
    }
    let parts: Vec<&str> = shown.rsplit('/').take(2).collect();
    let tail = parts.into_iter().rev().collect::<Vec<_>>().join("/");
    if tail.len() < shown.len() {
        format!("…/{tail}:{line}")
    } else {
        format!("{shown}:{line}")
    }
}

/// `(256, 1, 1)` as `256`, `(16, 16, 1)` as `16,16`: trailing ones
/// dropped and no spaces, so a launch shape stays one word in a table.
fn dims(shape: &str) -> String {
    let inner = shape.trim().trim_start_matches('(').trim_end_matches(')');
    let mut parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    while parts.len() > 1 && parts.last() == Some(&"1") {
        parts.pop();
    }
    parts.join(",")
}

/// The start of a reason that is said whole in a note: its first clause
/// when short, else its first words.
fn head(reason: &str) -> String {
    const MOST: usize = 44;
    let clause = reason.split([';', ',']).next().unwrap_or(reason).trim();
    if clause.chars().count() <= MOST {
        return clause.to_string();
    }
    let mut out = String::new();
    for word in clause.split(' ') {
        if out.chars().count() + word.chars().count() + 1 > MOST - 1 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out.push('…');
    out
}
