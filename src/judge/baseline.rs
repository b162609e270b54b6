//! Baselines: a report of an earlier run whose findings are already known,
//! so only new sites (by stable id) fail the gate.

use std::collections::HashSet;
use std::path::Path;

use cudawatch_model::{AccessStats, Report};

use crate::errors::ExpectedError;

/// Reads a JSON report written by cudawatch (`report.json`, `--format json`).
pub fn read_report(path: &Path) -> Result<Report, ExpectedError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExpectedError::Input {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    refuse_newer_schema(path, &text)?;
    let mut report: Report = serde_json::from_str(&text).map_err(|e| ExpectedError::Input {
        path: path.display().to_string(),
        message: format!("not a cudawatch JSON report: {e}"),
    })?;
    super::notes::moved_out_of_warnings(&mut report);
    shares_read_again(&mut report);
    Ok(report)
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
