//! The verdict: the lines every format ends with, written from the gate's
//! facts, so "CLEAN" is printed exactly when the exit code is 0 with
//! nothing found, and "FINDINGS"/"FAILED" exactly when it is 1.

use cudawatch_model::{InputKind, Report, Severity, Site, Tool, VerdictLabel, VerdictLine};

use cudawatch_parsers::site::simple_kernel_name;

use super::gate::Facts;
use super::policy::{FailOn, Policy};
use crate::words::plural;

/// The verdict lines of `facts`, worst news first.
// Over 100 lines on purpose: the verdict's lines in the order they are printed.
pub fn lines(facts: &Facts<'_>, report: &Report, policy: &Policy) -> Vec<VerdictLine> {
    let mut lines = Vec::new();
    let mut push = |label: VerdictLabel, text: String| lines.push(VerdictLine { label, text });
    if facts.interrupted {
        push(
            VerdictLabel::Interrupted,
            "the run was stopped: later stages did not run, and the report covers what finished"
                .into(),
        );
    }
    if !facts.inconclusive.is_empty() {
        push(
            VerdictLabel::Inconclusive,
            format!(
                "{} could not really check the program: not clean",
                with_first_reasons(&facts.inconclusive, report)
            ),
        );
    }
    if facts.nothing_checked {
        let why: Vec<String> = report
            .stages
            .iter()
            .map(|s| format!("{} ({})", s.tool.name(), s.reason))
            .collect();
        push(
            VerdictLabel::Inconclusive,
            format!(
                "no stage applied to this program, so nothing was checked: {}",
                why.join("; ")
            ),
        );
    }
    if !facts.damaged_inputs.is_empty() {
        push(
            VerdictLabel::Inconclusive,
            format!(
                "{} could not be fully read or held nothing to check (see the warnings): not clean",
                facts.damaged_inputs.join(", ")
            ),
        );
    }
    let accepted = (facts.accepted > 0).then(|| {
        format!(
            "{} accepted (suppressed or in the baseline)",
            plural(facts.accepted as u64, "site")
        )
    });
    let outside = (facts.out_of_scope > 0).then(|| {
        format!(
            "{} inside framework or library code reported, not gating (--gate-scope all)",
            plural(facts.out_of_scope as u64, "site")
        )
    });
    let failed = |titles: &[&str]| {
        (!titles.is_empty()).then(|| format!("failed checks: {}", titles.join(", ")))
    };
    let checks = failed(&facts.failed_checks);
    let ungated_checks = failed(&facts.failed_checks_not_gating);
    let join = |parts: Vec<Option<String>>| -> String {
        parts.into_iter().flatten().collect::<Vec<_>>().join("; ")
    };
    let unknown = unknown_kinds(report);
    let blocked = (!facts.blocked.is_empty()).then(|| {
        format!(
            "{} could not finish because of them",
            facts.blocked.join(", ")
        )
    });
    if !facts.gating.is_empty() {
        let folded = (facts.consequences > 0).then(|| {
            format!(
                "{} following from it folded under it",
                plural(facts.consequences as u64, "site")
            )
        });
        push(
            VerdictLabel::Findings,
            join(vec![
                facts
                    .root_cause
                    .map(|root| root_cause(root, facts.explained_crash, report))
                    .or_else(|| {
                        facts
                            .gating
                            .first()
                            .map(|site| format!("first: {}{}", who(site), describe(site)))
                    }),
                Some(gating_sites(facts)),
                folded,
                checks,
                blocked,
                unknown.clone(),
                outside,
                accepted,
            ]),
        );
    } else if checks.is_some() || facts.target_failed.is_some() {
        let program = facts
            .target_failed
            .map(|reason| format!("the plain run failed: {reason}"));
        let lead = if policy.fail_on == FailOn::Error {
            "no error sites, but".to_string()
        } else {
            format!("no sites at --fail-on {}, but", policy.fail_on.name())
        };
        let rest = join(vec![checks, program]);
        push(
            VerdictLabel::Failed,
            join(vec![Some(format!("{lead} {rest}")), outside, accepted]),
        );
    } else if facts.open_errors_not_gating > 0 {
        push(
            VerdictLabel::Passed,
            join(vec![
                Some(format!(
                    "{}, none fails the gate (--fail-on {})",
                    plural(facts.open_errors_not_gating as u64, "error site"),
                    policy.fail_on.name()
                )),
                ungated_checks,
                not_checked(facts),
                unknown.clone(),
                outside,
                accepted,
            ]),
        );
    } else if (facts.open_warnings_not_gating > 0 || ungated_checks.is_some())
        && facts.inconclusive.is_empty()
        && facts.damaged_inputs.is_empty()
        && !facts.interrupted
    {
        // Findings or failed checks are listed: the run passed the gate,
        // it was not clean.
        let listed = match facts.open_warnings_not_gating {
            0 => "no sites".to_string(),
            n => format!(
                "no error sites; {} listed",
                plural(n as u64, "warning or note site")
            ),
        };
        let what = match &ungated_checks {
            Some(checks) => format!("{listed}; {checks}; none fails the gate"),
            None => format!("{listed}, none fails the gate"),
        };
        push(
            VerdictLabel::Passed,
            join(vec![
                Some(format!("{what} (--fail-on {})", policy.fail_on.name())),
                not_checked(facts),
                unknown,
                outside,
                accepted,
            ]),
        );
    } else if facts.inconclusive.is_empty()
        && facts.damaged_inputs.is_empty()
        && !facts.nothing_checked
    {
        // Clean as far as it was checked: say what was not.
        let mut line = clean_scope(report, facts);
        for note in [outside, accepted].into_iter().flatten() {
            line.push_str(&format!("; {note}"));
        }
        // An interrupted run already said why it is not clean.
        if !facts.interrupted {
            push(VerdictLabel::Clean, line);
        }
    }
    one_line_decides(lines)
}

/// One line, last, says what decides the exit code: a run that has
/// findings (or failed checks) and could not check everything is
/// inconclusive (exit 3) with them, not two lines whose last says
/// FINDINGS over an exit 3 (a CI log's last line is what people read).
fn one_line_decides(lines: Vec<VerdictLine>) -> Vec<VerdictLine> {
    let found = lines
        .iter()
        .find(|l| matches!(l.label, VerdictLabel::Findings | VerdictLabel::Failed))
        .cloned();
    let inconclusive: Vec<String> = lines
        .iter()
        .filter(|l| l.label == VerdictLabel::Inconclusive)
        .map(|l| l.text.clone())
        .collect();
    let Some(found) = found.filter(|_| !inconclusive.is_empty()) else {
        return lines;
    };
    let with = if found.label == VerdictLabel::Findings {
        "with findings"
    } else {
        "with failed checks"
    };
    let mut merged: Vec<VerdictLine> = lines
        .into_iter()
        .filter(|l| l.label == VerdictLabel::Interrupted)
        .collect();
    merged.push(VerdictLine {
        label: VerdictLabel::Inconclusive,
        text: format!("{with}: {}; and {}", found.text, inconclusive.join("; ")),
    });
    merged
}

/// `1 site of a record kind cudawatch does not know (InitcheckFoo), listed
/// as a warning`: what a newer tool printed that this cudawatch cannot
/// judge, named wherever the verdict lists sites.
fn unknown_kinds(report: &Report) -> Option<String> {
    let sites: Vec<&Site> = report
        .findings
        .iter()
        .filter(|s| s.kind == cudawatch_model::FindingKind::Unrecognised)
        .collect();
    let first = sites.first()?;
    Some(format!(
        "{} of a record kind cudawatch does not know ({}{}), listed as {}: a newer cudawatch may \
         judge it",
        plural(sites.len() as u64, "site"),
        crate::words::shorten(&first.message, 60),
        if sites.len() > 1 { ", ..." } else { "" },
        if sites.len() > 1 {
            "warnings"
        } else {
            "a warning"
        }
    ))
}

/// `no errors found, with 1 warning (see Warnings); not checked: ...; not
/// applicable: csan, memory; not run (--stages): ...`: what a clean verdict
/// vouches for, and each thing it does not.
fn clean_scope(report: &Report, facts: &Facts<'_>) -> String {
    let mut line = String::from("no errors found");
    if !report.warnings.is_empty() {
        // Placement-free: the terminal says warnings above the
        // verdict, the HTML page below it.
        line.push_str(&format!(
            ", with {} (see Warnings)",
            crate::words::plural(
                cudawatch_model::Warning::grouped(&report.warnings).len() as u64,
                "warning"
            )
        ));
    }
    if !facts.unchecked.is_empty() {
        line.push_str(&format!("; not checked: {}", facts.unchecked.join(", ")));
    }
    if let Some(covered) = steps_scope(report) {
        line.push_str(&format!("; {covered}"));
    }
    // A stage that did not apply checked nothing: CLEAN says which.
    let not_applicable: Vec<&str> = report
        .stages
        .iter()
        .filter(|s| {
            s.outcome == cudawatch_model::Outcome::Skipped && s.reason.starts_with("not applicable")
        })
        .map(|s| s.tool.name())
        .collect();
    if !not_applicable.is_empty() {
        line.push_str(&format!("; not applicable: {}", not_applicable.join(", ")));
    }
    let not_selected = not_selected(report);
    if !not_selected.is_empty() {
        line.push_str(&format!(
            "; not run (--stages): {}",
            not_selected.join(", ")
        ));
    }
    if report.stages.is_empty() {
        line.push_str(&parsed_scope(report));
    }
    line
}

/// The stages of a full check a run left out: a run of fewer (`--stages`,
/// or a settings file's `stages`) is clean for those alone.
fn not_selected(report: &Report) -> Vec<&'static str> {
    if report.stages.is_empty() {
        return Vec::new();
    }
    // The core dump checks nothing a clean run lacks: it places a device
    // exception, and a clean run met none.
    Tool::DEFAULT_STAGES
        .iter()
        .filter(|t| **t != Tool::Coredump)
        .filter(|t| !report.stages.iter().any(|s| s.tool == **t))
        .map(|t| t.name())
        .collect()
}

/// How a run checked less than a full one, for a sweep's row: what its
/// CLEAN line says as `not run (--stages)` and of its steps.
pub fn narrowed(report: &Report) -> cudawatch_model::Narrowed {
    cudawatch_model::Narrowed {
        not_run: not_selected(report).into_iter().map(String::from).collect(),
        first_steps: report.stages.iter().any(|s| s.covered.is_some()),
    }
}

/// `the tool stages checked the program's first steps, the plain run all of
/// them (--whole-program: every step)`: how much of a training or
/// inference loop a clean verdict vouches for, when stages ended it early.
fn steps_scope(report: &Report) -> Option<String> {
    let covered: Vec<_> = report.stages.iter().filter_map(|s| s.covered).collect();
    let first = covered.first()?;
    Some(if covered.iter().any(|c| c.by_default) {
        "the tool stages checked the loop's first steps and the plain run all of them \
         (--whole-program: every step under every tool)"
            .to_string()
    } else {
        format!(
            "every stage checked {} only (--steps)",
            first.words().replacen("its ", "the program's ", 1)
        )
    })
}

/// `not checked: coalescing within thresholds`: the checklist items a
/// passed run could not judge (ncu's sector totals of zero), said where the
/// verdict is, as a clean run's says them.
fn not_checked(facts: &Facts<'_>) -> Option<String> {
    (!facts.unchecked.is_empty()).then(|| format!("not checked: {}", facts.unchecked.join(", ")))
}

/// What a report of parsed files covers, since a clean one vouches only for
/// the tools whose output was given: `; memcheck clean for 1 file; not
/// given: racecheck, initcheck, synccheck, ncu`.
fn parsed_scope(report: &Report) -> String {
    // The stages a parsed file can stand for (the plain run and CSAN are
    // program output, never "not given"), and a sanitizer file whose tool
    // its name did not say.
    let tools: Vec<Tool> = Tool::STAGES
        .into_iter()
        .filter(|t| t.parsed_from_files())
        .chain([Tool::Sanitizer])
        .collect();
    let files = |tool: Tool| {
        report
            .inputs
            .iter()
            .filter(|i| i.tool == tool && i.kind != InputKind::ProgramOutput)
            .count() as u64
    };
    let given: Vec<String> = tools
        .iter()
        .filter(|t| files(**t) > 0)
        .map(|t| format!("{} ({})", t.name(), plural(files(*t), "file")))
        .collect();
    // An opt-in tool's output (global races) missing is no gap in what a
    // default run covers: not named.
    let missing: Vec<&str> = tools
        .iter()
        .filter(|t| Tool::DEFAULT_STAGES.contains(t) && files(**t) == 0)
        .map(|t| t.name())
        .collect();
    let mut scope = String::new();
    if !given.is_empty() {
        scope.push_str(&format!("; checked: {}", given.join(", ")));
    }
    if !missing.is_empty() {
        scope.push_str(&format!("; not given: {}", missing.join(", ")));
    }
    scope
}

/// `root cause: memcheck invalid_access at poke.py:11 (launched from
/// train.py:40): Invalid __global__ write ...; it explains the plain run's
/// cudaErrorIllegalAddress at train.py:40`.
fn root_cause(root: &Site, crash: Option<&Site>, report: &Report) -> String {
    let mut line = match who(root) {
        ranks if ranks.is_empty() => format!("root cause: {}", describe(root)),
        ranks => format!(
            "root cause: {} failed first: {}",
            ranks.trim_end_matches(": "),
            describe(root)
        ),
    };
    if root.tool == Tool::Plain && super::consequences::is_sticky(root) {
        // Only a memcheck that ran can fail to reproduce it; without one
        // the error's first cause was never looked for.
        let memcheck_stage = report.stages.iter().find(|s| s.tool == Tool::Memcheck);
        line.push_str(if memcheck_looked(report) {
            " (not reproduced under the sanitizers)"
        } else if let Some(stage) = memcheck_stage {
            // Asked for, but it could not look (not found, cut, crashed).
            if stage.outcome == cudawatch_model::Outcome::Skipped {
                " (memcheck was skipped: see its stage)"
            } else {
                " (memcheck could not run to the end to find where it started: see its stage)"
            }
        } else {
            " (no memcheck ran to find where it started: cudawatch run --stages plain,memcheck)"
        });
    }
    if let Some(crash) = crash {
        let error = crash.error.as_deref().unwrap_or("its error");
        let at = crash
            .location
            .as_ref()
            .map(|l| format!(" at {}", l.short()))
            .unwrap_or_default();
        line.push_str(&format!("; it explains the plain run's {error}{at}"));
    }
    line
}

/// Whether memcheck's output is part of the report: a memcheck stage that
/// ran to its end, or memcheck's files given to `parse`.
fn memcheck_looked(report: &Report) -> bool {
    use cudawatch_model::Outcome;
    report.stages.iter().any(|s| {
        s.tool == Tool::Memcheck && matches!(s.outcome, Outcome::Clean | Outcome::Findings)
    }) || (report.stages.is_empty()
        && report.inputs.iter().any(|i| {
            matches!(i.tool, Tool::Memcheck | Tool::Sanitizer) && i.kind != InputKind::ProgramOutput
        }))
}

/// `rank 1: ` for a site of a multi-process program whose ranks are
/// known; empty otherwise, and for a collective timeout, whose message
/// names the ranks itself.
fn who(site: &Site) -> String {
    let mut ranks: Vec<u32> = site.processes.iter().filter_map(|p| p.rank).collect();
    ranks.dedup();
    if ranks.is_empty() || site.kind == cudawatch_model::FindingKind::CollectiveTimeout {
        return String::new();
    }
    format!("{}: ", cudawatch_model::ranks_words(&ranks))
}

/// `memcheck invalid_access at poke.py:11 (launched from train.py:40): message`.
fn describe(site: &Site) -> String {
    let at = site
        .location
        .as_ref()
        .map(|l| format!(" at {}", l.short()))
        .unwrap_or_default();
    let kernel = match (&site.location, &site.kernel) {
        (None, Some(kernel)) => format!(" in {}", simple_kernel_name(kernel)),
        _ => String::new(),
    };
    // A Python line that is the site's own location (a stream race, a
    // Python exception) is said once.
    let from = site
        .python_frame
        .as_ref()
        .filter(|f| {
            site.location.as_ref().is_none_or(|l| {
                f.file.as_deref() != Some(l.file.as_str()) || f.line != Some(l.line)
            })
        })
        .and_then(|f| {
            Some(format!(
                " (launched from {})",
                cudawatch_model::short_place(f.file.as_deref()?, f.line?)
            ))
        })
        .unwrap_or_default();
    format!(
        "{} {}{at}{kernel}{from}: {}",
        site.tool.name(),
        site.kind.id(),
        site.message
    )
}

/// `3 error sites`, or by severity when warnings or notes gate too.
fn gating_sites(facts: &Facts<'_>) -> String {
    let count = |severity: Severity| {
        facts
            .gating
            .iter()
            .filter(|s| s.severity == severity)
            .count()
    };
    let parts: Vec<String> = [
        (Severity::Error, "error site"),
        (Severity::Warning, "warning site"),
        (Severity::Note, "note site"),
    ]
    .into_iter()
    .filter_map(|(severity, noun)| {
        let n = count(severity);
        (n > 0).then(|| plural(n as u64, noun))
    })
    .collect();
    parts.join(", ")
}

/// `memcheck, racecheck (compute-sanitizer was not found on PATH), ncu
/// (timed out after 240s and was stopped)`: the stages named in the verdict
/// with the first clause of their reason, stages of one reason together,
/// so the line a user reads first says what to fix without a trip to the
/// stages table.
fn with_first_reasons(names: &[&str], report: &Report) -> String {
    const MOST: usize = 60;
    let clause = |name: &str| {
        let stage = report.stages.iter().find(|s| s.tool.name() == name)?;
        let first = stage.reason.split([';', '[']).next()?.trim();
        (!first.is_empty()).then(|| crate::words::shorten(first, MOST))
    };
    let mut groups: Vec<(Option<String>, Vec<&str>)> = Vec::new();
    for name in names {
        let why = clause(name);
        match groups.iter_mut().find(|(w, _)| *w == why) {
            Some((_, members)) => members.push(name),
            None => groups.push((why, vec![name])),
        }
    }
    let shown: Vec<String> = groups
        .into_iter()
        .map(|(why, members)| match why {
            Some(why) => format!("{} ({why})", members.join(", ")),
            None => members.join(", "),
        })
        .collect();
    shown.join(", ")
}
