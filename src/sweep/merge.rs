//! From sweep directories to one [`SweepReport`]: each target's run judged
//! under the sweep's policy, its row made, and every finding folded by
//! site across targets. Shards of one sweep merge; shards of another, or
//! the same shard twice, are refused; missing shards are named and leave
//! the sweep inconclusive.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use cudawatch_model::{
    Counts, Expect, Severity, ShardRef, SweepReport, SweepSite, TargetResult, TargetState,
};

use super::dir::{Manifest, SweepDir};
use super::file::{SweepFile, Target};
use super::shard::Shard;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::judge::{self, Policy};

/// Where each target's results are: the directory and shard that ran it.
pub struct Sources {
    /// The sweep id.
    pub sweep_id: String,
    /// The targets, in the sweep file's order.
    pub targets: Vec<Target>,
    /// The shards found.
    pub shards: Vec<ShardRef>,
    /// By target name: the directory and shard index that ran it.
    pub shard_of: HashMap<String, (SweepDir, u32)>,
    /// Warnings about missing shards.
    pub warnings: Vec<String>,
}

/// Reads the shards in `dirs`, refusing foreign and duplicated shards.
// Over 100 lines on purpose: each shard's checks in order, each refusal with
// its own message.
pub fn sources(dirs: &[PathBuf]) -> Result<Sources, ExpectedError> {
    let mut sweep: Option<(String, PathBuf, String)> = None;
    let mut by_index: BTreeMap<u32, (PathBuf, Manifest, SweepDir)> = BTreeMap::new();
    let mut count: Option<(u32, PathBuf)> = None;
    let mut seen_dirs = Vec::new();
    for path in dirs {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if seen_dirs.contains(&canonical) {
            continue;
        }
        seen_dirs.push(canonical);
        let (dir, text) = SweepDir::existing(path)?;
        let id = SweepFile::id_of(&text);
        match &sweep {
            None => sweep = Some((id.clone(), path.clone(), text)),
            Some((first, first_path, _)) if *first != id => {
                return Err(ExpectedError::Input {
                    path: path.display().to_string(),
                    message: format!(
                        "is a shard of another sweep (sweep id {id}, not {first} as in {}): merge only shards of one sweep file",
                        first_path.display()
                    ),
                });
            }
            Some(_) => {}
        }
        for manifest in dir.manifests()? {
            // A shard directory may come from anywhere: a count of four
            // billion must not become four billion "missing" lines.
            if Shard::new(manifest.index, manifest.count).is_none() {
                return Err(ExpectedError::Input {
                    path: path.display().to_string(),
                    message: format!(
                        "a manifest names shard {}/{}, which no sweep writes (shards are 0 to N-1 of at most 10000)",
                        manifest.index, manifest.count
                    ),
                });
            }
            if manifest.sweep_id != id {
                return Err(ExpectedError::Input {
                    path: path.display().to_string(),
                    message: format!(
                        "shard {}/{} names sweep {} but the directory holds sweep {id}",
                        manifest.index, manifest.count, manifest.sweep_id
                    ),
                });
            }
            match &count {
                None => count = Some((manifest.count, path.clone())),
                Some((n, first)) if *n != manifest.count => {
                    return Err(ExpectedError::Input {
                        path: path.display().to_string(),
                        message: format!(
                            "holds shard {}/{} but {} holds shards of {n}: merge shards of one split",
                            manifest.index,
                            manifest.count,
                            first.display()
                        ),
                    });
                }
                Some(_) => {}
            }
            if let Some((other, _, _)) = by_index.get(&manifest.index) {
                return Err(ExpectedError::Input {
                    path: path.display().to_string(),
                    message: format!(
                        "shard {}/{} is here and in {} too: keep one of them",
                        manifest.index,
                        manifest.count,
                        other.display()
                    ),
                });
            }
            by_index.insert(manifest.index, (path.clone(), manifest, dir.clone()));
        }
    }
    let Some((sweep_id, first_path, text)) = sweep else {
        return Err(ExpectedError::Usage("no sweep directory to merge".into()));
    };
    let file = SweepFile::parse_unchecked(&first_path.join("sweep.toml"), &text)?;
    let mut warnings = Vec::new();
    let count = count.map_or(1, |(n, _)| n);
    let missing: Vec<String> = (0..count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        warnings.push(format!(
            "missing shard{} {}: {} targets were not merged",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "its" } else { "their" }
        ));
    }
    let mut owner = HashMap::new();
    let mut shards = Vec::new();
    for (index, (path, manifest, dir)) in &by_index {
        shards.push(ShardRef {
            index: *index,
            count,
            dir: path.display().to_string(),
        });
        for name in &manifest.targets {
            // Two shards that claim one target: one shard's clean attempt
            // would hide the other's findings, whichever is merged last.
            if let Some((_, other)) = owner.insert(name.clone(), (dir.clone(), *index)) {
                return Err(ExpectedError::Input {
                    path: path.display().to_string(),
                    message: format!(
                        "target {name:?} is claimed by shards {other}/{count} and {index}/{count}: \
                         a shard's manifest names only its own targets; merge the shards of \
                         one run"
                    ),
                });
            }
        }
    }
    Ok(Sources {
        sweep_id,
        targets: file.targets,
        shards,
        shard_of: owner,
        warnings,
    })
}

/// The merged report of `sources`, each run judged under `policy`. Only
/// the targets `only` names are rowed when given (a shard's own report).
pub fn merge(sources: &Sources, policy: &Policy, only: Option<&[String]>) -> SweepReport {
    let mut targets = Vec::new();
    let mut folded: Vec<SweepSite> = Vec::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    for info in &sources.targets {
        if only.is_some_and(|names| !names.contains(&info.name)) {
            continue;
        }
        let Some((dir, shard)) = sources.shard_of.get(&info.name) else {
            targets.push(row(
                info,
                TargetState::Missing,
                "its shard was not merged".into(),
                0,
            ));
            continue;
        };
        let (result, report) = target(dir, *shard, info, policy);
        if let Some((report, judgement)) = report {
            // The folded sites carry the owner and consequence links the
            // judging gave them (`target` accepted and judged the report).
            for site in report.findings {
                let gating = judgement.gating.contains(&site.id);
                let out_of_scope = judgement.out_of_scope.contains(&site.id);
                match index_of.get(&site.id) {
                    Some(&i) => {
                        let entry = &mut folded[i];
                        entry.site.count += site.count;
                        // A lower bound in one program (a flood's kept
                        // records) makes the sum one too.
                        entry.site.count_at_least |= site.count_at_least;
                        entry.site.severity = entry.site.severity.max(site.severity);
                        if !entry.targets.contains(&info.name) {
                            entry.targets.push(info.name.clone());
                        }
                        entry.out_of_scope &= out_of_scope;
                        if gating && !entry.gating_in.contains(&info.name) {
                            entry.gating_in.push(info.name.clone());
                        }
                    }
                    None => {
                        index_of.insert(site.id.clone(), folded.len());
                        folded.push(SweepSite {
                            site,
                            targets: vec![info.name.clone()],
                            gating_in: if gating {
                                vec![info.name.clone()]
                            } else {
                                Vec::new()
                            },
                            out_of_scope,
                            change: None,
                        });
                    }
                }
            }
        }
        targets.push(result);
    }
    folded.sort_by(|a, b| {
        b.gating_in
            .len()
            .min(1)
            .cmp(&a.gating_in.len().min(1))
            .then(b.site.severity.cmp(&a.site.severity))
            .then(b.targets.len().cmp(&a.targets.len()))
            .then(a.site.id.cmp(&b.site.id))
    });
    let mut report = SweepReport {
        schema_version: cudawatch_model::SCHEMA_VERSION,
        cudawatch_version: env!("CARGO_PKG_VERSION").to_string(),
        sweep_id: sources.sweep_id.clone(),
        shards: sources.shards.clone(),
        targets,
        sites: folded,
        fixed_sites: Vec::new(),
        baseline: None,
        history: Vec::new(),
        warnings: if only.is_some() {
            Vec::new()
        } else {
            sources.warnings.clone()
        },
        interrupted: false,
        verdict: Vec::new(),
        exit_code: 0,
    };
    judge::sweep::judge(&mut report);
    report
}

/// A row with no run behind it.
fn row(info: &Target, state: TargetState, summary: String, shard: u32) -> TargetResult {
    TargetResult {
        name: info.name.clone(),
        command: info.command.clone(),
        tags: info.tags.clone(),
        expect: info.expect,
        state,
        verdict: None,
        exit_code: None,
        as_expected: false,
        standing: cudawatch_model::Standing::Unchecked,
        summary,
        counts: Counts::default(),
        seconds: 0.0,
        gpu: None,
        attempts: 0,
        run_dir: None,
        shard,
        checksum: None,
        change: None,
        warnings: Vec::new(),
        narrowed: Default::default(),
    }
}

type Judged = (cudawatch_model::Report, cudawatch_model::Judgement);

/// One target's row, and its judged report when it has one.
fn target(
    dir: &SweepDir,
    shard: u32,
    info: &Target,
    policy: &Policy,
) -> (TargetResult, Option<Judged>) {
    let scan = dir.scan(&info.name);
    let mut result = row(
        info,
        TargetState::NotRun,
        "not started: the budget was spent or the sweep was stopped first".into(),
        shard,
    );
    result.attempts = scan.attempts;
    if scan.attempts == 0 {
        return (result, None);
    }
    let (k, record) = match &scan.finished {
        Some((k, record)) => (*k, record.clone()),
        None => (scan.attempts, scan.latest.clone()),
    };
    if let Some(record) = &record {
        result.gpu = record.gpu.clone();
        result.seconds = record.seconds;
        result.checksum = record.checksum.clone();
        if let Some(error) = &record.setup_error {
            result.state = TargetState::SetupError;
            result.summary = error.clone();
            return (result, None);
        }
    }
    result.run_dir = dir
        .attempt_dir(&info.name, k)
        .strip_prefix(&dir.path)
        .ok()
        .map(|p| p.display().to_string());
    let Some(mut report) = dir.report(&info.name, k) else {
        result.state = TargetState::Incomplete;
        result.summary = match &record {
            Some(r) if r.by_budget => {
                "stopped by the sweep's budget before its first stage ended".into()
            }
            Some(r) if r.timed_out => "stopped at its timeout before its first stage ended".into(),
            _ => {
                "did not finish and left no report (the sweep was killed?); a resume runs it again"
                    .into()
            }
        };
        return (result, None);
    };
    if let Some(why) = dir.untrusted_report(info, k, record.as_ref(), Some(&report)) {
        result.state = TargetState::Incomplete;
        result.summary = format!("its report.json {why}: not trusted; a resume runs it again");
        return (result, None);
    }
    judge::accept(&mut report, policy);
    let judgement = judge::judge(&report, policy);
    if let Some(why) = cleaner_than_its_run(record.as_ref(), &report, judgement.exit_code) {
        result.state = TargetState::Incomplete;
        result.summary = format!("its report.json {why}: not trusted; a resume runs it again");
        return (result, None);
    }
    result.warnings = report
        .warnings
        .iter()
        .map(|w| format!("{}: {}", w.source, w.message))
        .collect();
    result.exit_code = Some(judgement.exit_code);
    result.verdict = judgement.verdict.first().map(|l| l.label);
    result.counts = counts(&report, &judgement);
    let first_line = judgement
        .verdict
        .first()
        .map(|l| l.text.clone())
        .unwrap_or_default();
    result.narrowed = judge::verdict::narrowed(&report);
    if scan.finished.is_some() {
        result.state = TargetState::Finished;
        result.as_expected = judge::sweep::as_expected(info.expect, Some(judgement.exit_code));
        result.summary = match (info.expect, judgement.exit_code, result.as_expected) {
            (Expect::Findings, exit_codes::CLEAN, _) => {
                format!("expected findings, none gate: {first_line}")
            }
            _ => first_line,
        };
    } else {
        result.state = TargetState::Incomplete;
        let why = match &record {
            Some(r) if r.by_budget => "stopped by the sweep's budget",
            Some(r) if r.timed_out => "stopped at its timeout",
            Some(r) if r.interrupted => "stopped by the user",
            _ => "did not finish (the sweep was killed?)",
        };
        result.summary = format!("{why}; partial findings kept: {first_line}");
    }
    (result, Some((report, judgement)))
}

/// A report that says less than the exit code its own run gave when it
/// ended (`Attempt::exit_code`): findings with no site in it, or an
/// inconclusive run judged clean. No policy makes either; an edited report
/// (its digest removed from the record too) does.
fn cleaner_than_its_run(
    record: Option<&crate::sweep::dir::Attempt>,
    report: &cudawatch_model::Report,
    judged: i32,
) -> Option<String> {
    match record?.exit_code? {
        exit_codes::FINDINGS if report.findings.is_empty() => {
            Some("holds no finding, where its run exited 1 with findings".into())
        }
        exit_codes::INCONCLUSIVE if judged == exit_codes::CLEAN => {
            Some("judges clean, where its run exited 3, inconclusive".into())
        }
        _ => None,
    }
}

fn counts(report: &cudawatch_model::Report, judgement: &cudawatch_model::Judgement) -> Counts {
    let mut counts = Counts {
        gating: judgement.gating.len() as u64,
        ..Counts::default()
    };
    for site in report.findings.iter().filter(|s| s.suppressed.is_none()) {
        match site.severity {
            Severity::Error => counts.errors += 1,
            Severity::Warning => counts.warnings += 1,
            Severity::Note => counts.notes += 1,
        }
    }
    counts
}
