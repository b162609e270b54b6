//! A Markdown summary for pull requests and `$GITHUB_STEP_SUMMARY`: stages,
//! findings by site, coalescing.

use std::fmt::Write as _;

use cudawatch_model::{CheckStatus, Warning};

use super::{Exporter, Judged};

/// `--report markdown`.
pub struct MarkdownExporter;

impl Exporter<Judged<'_>> for MarkdownExporter {
    // Over 100 lines on purpose: the Markdown report's sections in document order.
    fn render(&self, doc: &Judged<'_>) -> Vec<u8> {
        let (report, judgement) = (doc.report, doc.judgement);
        let mut out = String::from("## cudawatch\n\n");
        for line in &judgement.verdict {
            let _ = writeln!(out, "**{}** {}\n", line.label.heading(), cell(&line.text));
        }
        if !report.target.is_empty() {
            let _ = writeln!(out, "{}\n", cell(&report.target.join(" ")));
        }
        if !report.stages.is_empty() {
            out.push_str("| stage | outcome | why | time |\n| --- | --- | --- | --- |\n");
            for s in &report.stages {
                let _ = writeln!(
                    out,
                    "| {} | **{}** | {} | {} |",
                    s.tool.name(),
                    s.shown_outcome(),
                    cell(&s.shown_reason()),
                    s.seconds.map(|t| format!("{t:.1} s")).unwrap_or_default()
                );
            }
            out.push('\n');
        }
        if !judgement.checklist.is_empty() {
            out.push_str("### Pre-deployment checklist\n\n| check | status | evidence |\n| --- | --- | --- |\n");
            for item in &judgement.checklist {
                let mark = match item.status {
                    CheckStatus::Pass => "pass",
                    CheckStatus::Fail => "**fail**",
                    CheckStatus::Inconclusive => "*inconclusive*",
                    CheckStatus::Skipped => "skipped",
                };
                let _ = writeln!(
                    out,
                    "| {} | {mark} | {} |",
                    item.title,
                    cell(&item.evidence)
                );
            }
            out.push('\n');
        }
        // Counted and listed as the terminal and the HTML page do: root
        // causes in the gate's scope; the others are folded into one line.
        let listed: Vec<&cudawatch_model::Site> = report
            .findings
            .iter()
            .filter(|s| super::describe::is_listed(s, &judgement.out_of_scope))
            .collect();
        let following = report
            .findings
            .iter()
            .filter(|s| s.consequence_of.is_some())
            .count();
        let outside = report.findings.len() - listed.len() - following;
        let _ = writeln!(out, "### Findings by site ({})\n", listed.len());
        if listed.is_empty() {
            out.push_str("None.\n\n");
        } else {
            out.push_str("| tool | kind | owner | kernel | where | count | message |\n| --- | --- | --- | --- | --- | --- | --- |\n");
            for s in listed {
                let kind = match super::describe::explanation(s).1 {
                    Some(link) => format!("[{}]({link})", s.kind.id()),
                    None => s.kind.id().to_string(),
                };
                let _ = writeln!(
                    out,
                    "| {} | {kind} | {} | {} | {} | {} | {} |",
                    s.tool.name(),
                    s.owner
                        .as_ref()
                        .map_or_else(String::new, |o| cell(&o.component)),
                    cell(s.kernel.as_deref().unwrap_or("")),
                    s.location
                        .as_ref()
                        .map(|l| cell(&l.shown()))
                        .unwrap_or_default(),
                    s.count_text(),
                    cell(&match super::describe::processes_line(s) {
                        Some(processes) => format!("{} (in {processes})", s.message),
                        None => s.message.clone(),
                    })
                );
            }
            out.push('\n');
        }
        let mut folded = Vec::new();
        if following > 0 {
            folded.push(format!("{following} following from a root cause"));
        }
        if outside > 0 {
            folded.push(format!(
                "{outside} inside framework and library code, not gating"
            ));
        }
        if !folded.is_empty() {
            let _ = writeln!(
                out,
                "Folded: {} (the JSON report lists them).\n",
                folded.join("; ")
            );
        }
        if let Some(memory) = report.memory.as_ref() {
            let lines = super::memory::cleaned_lines(memory);
            if !lines.is_empty() {
                // Indented, not fenced: a fence in a file name could close it.
                out.push_str("### GPU memory (PyTorch's allocator)\n\n");
                for line in lines {
                    let _ = writeln!(out, "    {line}");
                }
                out.push('\n');
            }
        }
        if !report.coalescing.is_empty() {
            out.push_str("### Coalescing\n\n| kernel | ld sectors/req | st sectors/req | ideal | wasted |\n| --- | --- | --- | --- | --- |\n");
            for k in &report.coalescing {
                let f = |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into());
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    cell(&k.kernel),
                    f(k.load.sectors_per_request()),
                    f(k.store.sectors_per_request()),
                    f(k.ideal_sectors_per_request),
                    k.excessive_pct()
                        .map(|p| format!("{p:.0}%"))
                        .unwrap_or_else(|| "-".into())
                );
            }
            out.push('\n');
        }
        let warnings = Warning::grouped(&report.warnings);
        for (title, items) in [("Warnings", &warnings), ("Notes", &report.notes)] {
            if items.is_empty() {
                continue;
            }
            let _ = writeln!(out, "### {title}\n");
            for w in items {
                let _ = writeln!(out, "- {}: {}", cell(&w.source), cell(&w.message));
            }
            out.push('\n');
        }
        if let Some(env) = &report.environment {
            environment(&mut out, env);
        }
        out.into_bytes()
    }
}

/// Where the run ran, every check doctor made: a pull request's reader
/// did not see the run's warnings (the terminal names only what is not ok).
/// Folded under its summary, as a pull request comment should be.
fn environment(out: &mut String, env: &cudawatch_model::Environment) {
    let _ = writeln!(
        out,
        "### Environment\n\n{}\n\n<details><summary>{}</summary>\n\n\
         | check | status | detail |\n| --- | --- | --- |",
        super::doctor::summary(env),
        crate::words::plural(env.checks.len() as u64, "check")
    );
    for check in &env.checks {
        let status = match check.status {
            cudawatch_model::EnvStatus::Problem => "**problem**",
            other => other.name(),
        };
        let _ = writeln!(
            out,
            "| {} | {status} | {} |",
            cell(&check.title),
            cell(&super::doctor::detail_and_fix(check))
        );
    }
    out.push_str("\n</details>\n\n");
}

/// Text safe inside a table cell: pipes escaped, HTML and newlines neutralised.
/// Text from tools as Markdown shows it literally: a kernel named
/// `![x](http://…)`, `[link](…)`, `` `code` `` or `__global__` renders as
/// itself, not as an image, a link, code or bold text. (Never put inside a
/// code span: backslash escapes do not work there.)
pub fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in super::untrusted::clean(text).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' | '[' | ']' | '(' | ')' | '!' | '`' | '*' | '_' | '\\' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}
