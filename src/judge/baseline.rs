//! Baselines: a report of an earlier run whose findings are already known,
//! so only new sites (by stable id) fail the gate.

use std::collections::HashSet;
use std::path::Path;

use cudawatch_model::{AccessStats, Report};

use crate::errors::ExpectedError;

/// Reads a JSON report written by cudawatch (`report.json`, `--format json`).
pub fn read_report(path: &Path) -> Result<Report, ExpectedError> {
    let text = read_bounded(path).map_err(|e| ExpectedError::Input {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    report_from_text(path, &text)
}

/// A JSON report's text, named `path` in errors, read as [`read_report`]
/// reads a file (the example `report --example` renders is built in).
pub fn report_from_text(path: &Path, text: &str) -> Result<Report, ExpectedError> {
    refuse_newer_schema(path, text)?;
    let mut report: Report = serde_json::from_str(text).map_err(|e| ExpectedError::Input {
        path: path.display().to_string(),
        message: format!("not a cudawatch JSON report: {e}"),
    })?;
    super::notes::moved_out_of_warnings(&mut report);
    shares_read_again(&mut report);
    Ok(report)
}

/// The most cudawatch reads of a JSON report. Its sites are folded and
/// their samples capped, so a real one is small (the ViT step's, every
/// stage and 30 coalescing rows: under 1 MB); parsed, a report takes about
/// 15 times its size (a 684 MB one took 10.6 GB), so a larger file is
/// refused before it is read.
pub const MAX_REPORT_BYTES: u64 = 64 << 20;

/// `path`'s text, if it is at most [`MAX_REPORT_BYTES`].
fn read_bounded(path: &Path) -> std::io::Result<String> {
    let bytes = crate::safe_files::read_named_at_most(path, MAX_REPORT_BYTES).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            std::io::Error::new(
                e.kind(),
                format!(
                    "more than the {} MiB cudawatch reads of a report (a real report is a \
                     few MB: is this one?)",
                    MAX_REPORT_BYTES >> 20
                ),
            )
        } else {
            e
        }
    })?;
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

/// A report of a schema this cudawatch does not know is refused, never
/// read: its findings and stages may have moved under keys this version
/// drops unseen, and what is left would read as clean.
fn refuse_newer_schema(path: &Path, text: &str) -> Result<(), ExpectedError> {
    #[derive(serde::Deserialize)]
    struct Version {
        schema_version: Option<u64>,
    }
    let Ok(Version {
        schema_version: Some(version),
    }) = serde_json::from_str::<Version>(text)
    else {
        return Ok(());
    };
    if version > u64::from(cudawatch_model::SCHEMA_VERSION) {
        return Err(ExpectedError::Input {
            path: path.display().to_string(),
            message: format!(
                "a report of schema {version}, newer than this cudawatch {} reads (schema {}): \
                 read it with a newer cudawatch",
                env!("CARGO_PKG_VERSION"),
                cudawatch_model::SCHEMA_VERSION
            ),
        });
    }
    Ok(())
}

/// Reports saved before cudawatch knew that ncu's bytes-used share misses
/// cp.async loads say "0%" for kernels that use every byte: read again
/// under today's rule (`AccessStats::new`).
fn shares_read_again(report: &mut Report) {
    for k in &mut report.coalescing {
        for stats in [&mut k.load, &mut k.store] {
            *stats = AccessStats::new(stats.requests, stats.sectors, stats.bytes_used_pct);
        }
    }
}

/// The site ids of a baseline report.
pub fn load(path: &Path) -> Result<HashSet<String>, ExpectedError> {
    Ok(read_report(path)?
        .findings
        .into_iter()
        .map(|s| s.id)
        .collect())
}

/// Marks the sites of `report` that the baseline already had.
pub fn apply(report: &mut Report, known: &HashSet<String>) {
    for site in &mut report.findings {
        site.in_baseline = known.contains(&site.id);
    }
}
