//! Night to night: a sweep compared with an earlier one (its directory,
//! its merged JSON report, or the last line of a history file), and the
//! history file itself: one JSON line per sweep, for the trend and for
//! balancing shards by last night's durations.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;

use cudawatch_model::{Change, FixedSite, HistoryEntry, HistoryTarget, SweepReport};

use crate::errors::ExpectedError;

/// The most cudawatch reads of an earlier sweep's report: sites folded
/// across targets keep it small (a thousand targets: a few MB); a larger
/// file is refused before it is read.
const MAX_SWEEP_REPORT_BYTES: u64 = 64 << 20;

/// The most cudawatch reads of a history file: a line a night.
const MAX_HISTORY_BYTES: u64 = 256 << 20;

/// How many earlier sweeps the trend shows.
pub const TREND_LENGTH: usize = 30;

/// The earlier sweep to compare with.
#[derive(Debug, Clone)]
pub struct Previous {
    /// What it was read from, for the report.
    pub source: String,
    /// Its line.
    pub entry: HistoryEntry,
}

/// Reads a baseline: a sweep directory (its `report.json`), a merged
/// sweep report (`.json`) or a history file (`.jsonl`, its last line).
/// A history with no sweep yet (the first night's, which that night's
/// `--history` starts) is no baseline: `None`.
pub fn load_baseline(path: &Path) -> Result<Option<Previous>, ExpectedError> {
    let error = |message: String| ExpectedError::Input {
        path: path.display().to_string(),
        message,
    };
    let source = path.display().to_string();
    if path.extension().is_some_and(|e| e == "jsonl") {
        let (entries, _) = read_history(path)?;
        return Ok(entries
            .into_iter()
            .last()
            .map(|entry| Previous { source, entry }));
    }
    let file = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_path_buf()
    };
    let bytes = crate::safe_files::read_at_most(&file, MAX_SWEEP_REPORT_BYTES).map_err(|e| {
        error(format!(
            "no sweep report to compare with ({}: {e})",
            file.display()
        ))
    })?;
    let report: SweepReport = serde_json::from_slice(&bytes)
        .map_err(|e| error(format!("not a cudawatch sweep report: {e}")))?;
    Ok(Some(Previous {
        source,
        entry: entry_of(&report, "", 0.0, ""),
    }))
}

/// The history line of a sweep report.
pub fn entry_of(report: &SweepReport, dir: &str, seconds: f64, at: &str) -> HistoryEntry {
    HistoryEntry {
        at: at.to_string(),
        sweep_id: report.sweep_id.clone(),
        dir: dir.to_string(),
        seconds,
        exit_code: report.exit_code,
        targets: report
            .targets
            .iter()
            .map(|t| HistoryTarget {
                name: t.name.clone(),
                state: t.state,
                verdict: t.verdict,
                as_expected: t.as_expected,
                seconds: t.seconds,
                counts: t.counts,
                checksum: t.checksum.clone(),
                command: t.command.clone(),
            })
            .collect(),
        sites: report
            .sites
            .iter()
            .map(|s| (s.site.id.clone(), s.site.message.clone(), s.targets.clone()))
            .collect(),
        out_of_scope: report.out_of_scope_ids(),
    }
}

/// Marks each target and site of `report` against `previous`.
///
/// A target whose verdict changed while its command and the checksum of
/// the files it names did not is flaky: nothing the sweep can see changed,
/// so the difference is the program's own nondeterminism (or the GPU's).
/// Otherwise: new (fails now, passed or was absent then), fixed, still
/// failing, or unchanged.
pub fn compare(report: &mut SweepReport, previous: &Previous) {
    let before: HashMap<&str, &HistoryTarget> = previous
        .entry
        .targets
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    for target in &mut report.targets {
        let was = before.get(target.name.as_str());
        let failing = target.failing();
        target.change = Some(match was {
            None => {
                if failing {
                    Change::New
                } else {
                    Change::Unchanged
                }
            }
            Some(was) => {
                let verdict_changed =
                    was.verdict != target.verdict || was.as_expected != target.as_expected;
                let same_program = was.command == target.command
                    && was.checksum.is_some()
                    && was.checksum == target.checksum;
                let conclusive_both = was.state == cudawatch_model::TargetState::Finished
                    && target.state == cudawatch_model::TargetState::Finished;
                match (!was.as_expected, failing) {
                    _ if verdict_changed && same_program && conclusive_both => Change::Flaky,
                    (false, true) => Change::New,
                    (true, false) => Change::Fixed,
                    (true, true) => Change::StillFailing,
                    (false, false) => Change::Unchanged,
                }
            }
        });
    }
    let old_sites: HashMap<&str, &(String, String, Vec<String>)> = previous
        .entry
        .sites
        .iter()
        .map(|s| (s.0.as_str(), s))
        .collect();
    for site in &mut report.sites {
        site.change = Some(if old_sites.contains_key(site.site.id.as_str()) {
            Change::Unchanged
        } else {
            Change::New
        });
    }
    // A site whose targets did not all run this time is not known to be fixed.
    let ran: Vec<&str> = report
        .targets
        .iter()
        .filter(|t| t.state == cudawatch_model::TargetState::Finished)
        .map(|t| t.name.as_str())
        .collect();
    let now: Vec<&str> = report.sites.iter().map(|s| s.site.id.as_str()).collect();
    report.fixed_sites = previous
        .entry
        .sites
        .iter()
        .filter(|(id, _, targets)| {
            !now.contains(&id.as_str()) && targets.iter().all(|t| ran.contains(&t.as_str()))
        })
        .map(|(id, message, targets)| FixedSite {
            id: id.clone(),
            message: message.clone(),
            targets: targets.clone(),
            out_of_scope: previous.entry.out_of_scope.contains(id),
        })
        .collect();
    report.baseline = Some(previous.source.clone());
}

/// Every readable line of a history file, oldest first, and a warning per
/// line that is not one (a line cut by a crash is skipped, not fatal).
pub fn read_history(path: &Path) -> Result<(Vec<HistoryEntry>, Vec<String>), ExpectedError> {
    let text = match crate::safe_files::read_at_most(path, MAX_HISTORY_BYTES) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => {
            return Err(ExpectedError::Input {
                path: path.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match serde_json::from_str(line) {
            Ok(entry) => entries.push(entry),
            Err(e) => warnings.push(format!(
                "{}:{}: skipped, not a sweep line: {e}",
                path.display(),
                n + 1
            )),
        }
    }
    Ok((entries, warnings))
}

/// Appends `entry`, or replaces the last line when it is the same sweep
/// directory's (a resumed sweep is one night, not two).
pub fn append_history(path: &Path, entry: &HistoryEntry) -> Result<(), ExpectedError> {
    let (mut entries, _) = read_history(path)?;
    let write_error = |e: std::io::Error| ExpectedError::Write {
        target: path.display().to_string(),
        message: e.to_string(),
    };
    let line =
        serde_json::to_string(entry).map_err(|e| write_error(std::io::Error::other(e)))? + "\n";
    if entries
        .last()
        .is_some_and(|l| l.dir == entry.dir && l.sweep_id == entry.sweep_id)
    {
        entries.pop();
        entries.push(entry.clone());
        let mut text = String::new();
        for e in &entries {
            text += &(serde_json::to_string(e)
                .map_err(|e| write_error(std::io::Error::other(e)))?
                + "\n");
        }
        return crate::safe_files::write_atomic(path, text.as_bytes()).map_err(write_error);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(write_error)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(write_error)
}

/// Each target's duration in the last sweep of the history, for shards.
pub fn durations(history: &[HistoryEntry]) -> BTreeMap<String, f64> {
    history
        .last()
        .map(|e| {
            e.targets
                .iter()
                .filter(|t| t.seconds > 0.0)
                .map(|t| (t.name.clone(), t.seconds))
                .collect()
        })
        .unwrap_or_default()
}
