//! `--page details`: one row per metric per launch, and, when a rule fired,
//! rule rows carrying the rule's name, type, text and estimated speedup.

use super::raw::{Launch, METRICS, launch};
use super::{Columns, cell, parse_number, rows, unit_scale};
use crate::error::ParseError;
use crate::model::KernelCoalescing;

/// A rule ncu applied to one launch, e.g. `UncoalescedGlobalAccess`.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleResult {
    /// Launch ID in the report.
    pub launch_id: u64,
    /// Demangled kernel name.
    pub kernel: String,
    /// Rule name.
    pub rule: String,
    /// `OPT`, `WRN`, `INF`, `ERR`.
    pub rule_type: String,
    /// The rule's advice, verbatim.
    pub description: String,
    /// Estimated speedup in percent.
    pub speedup_pct: Option<f64>,
}

/// The rule rows of a details page.
pub fn parse(input: &[u8]) -> Result<Vec<RuleResult>, ParseError> {
    let rows = rows(input)?;
    let mut out = Vec::new();
    let mut header: Option<Vec<String>> = None;
    for row in &rows {
        // ncu repeats the header row when the column set changes.
        if row.first().map(String::as_str) == Some("ID") {
            header = Some(row.clone());
            continue;
        }
        let Some(h) = header.as_ref() else {
            continue;
        };
        let cols = Columns::new(h);
        let (Some(rule), Some(id)) = (cols.find("Rule Name"), cols.find("ID")) else {
            continue;
        };
        let name = cell(row, Some(rule));
        let Some(launch_id) = parse_number(cell(row, Some(id))) else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        out.push(RuleResult {
            launch_id: launch_id as u64,
            kernel: cell(row, cols.find("Kernel Name")).to_string(),
            rule: name.to_string(),
            rule_type: cell(row, cols.find("Rule Type")).to_string(),
            description: cell(row, cols.find("Rule Description")).to_string(),
            speedup_pct: parse_number(cell(row, cols.find("Estimated Speedup"))),
        });
    }
    Ok(out)
}

/// The coalescing metrics of a details page (`ncu --csv --metrics ...`
/// prints this page by default: one row per metric per launch), per launch
/// in the order they come; launches with none of the metrics are left out.
pub fn coalescing(input: &[u8]) -> Result<Vec<KernelCoalescing>, ParseError> {
    let rows = rows(input)?;
    // (id, kernel, grid, block, metrics) per launch, in order.
    type Metrics = Vec<(String, f64)>;
    let mut launches: Vec<(u64, String, String, String, Metrics)> = Vec::new();
    let mut header: Option<Vec<String>> = None;
    for row in &rows {
        if row.first().map(String::as_str) == Some("ID") {
            header = Some(row.clone());
            continue;
        }
        let Some(h) = header.as_ref() else { continue };
        let cols = Columns::new(h);
        let (Some(id), Some(name), Some(value)) = (
            cols.find("ID"),
            cols.find("Metric Name"),
            cols.find("Metric Value"),
        ) else {
            continue;
        };
        let metric = cell(row, Some(name));
        if !METRICS.contains(&metric) {
            continue;
        }
        let (Some(launch_id), Some(v)) = (
            parse_number(cell(row, Some(id))),
            parse_number(cell(row, Some(value))),
        ) else {
            continue;
        };
        let v = v * unit_scale(cell(row, cols.find("Metric Unit")));
        let launch_id = launch_id as u64;
        if launches.last().is_none_or(|l| l.0 != launch_id) {
            launches.push((
                launch_id,
                cell(row, cols.find("Kernel Name")).to_string(),
                cell(row, cols.find("Grid Size")).to_string(),
                cell(row, cols.find("Block Size")).to_string(),
                Vec::new(),
            ));
        }
        if let Some(l) = launches.last_mut() {
            l.4.push((metric.to_string(), v));
        }
    }
    Ok(launches
        .iter()
        .map(|(id, kernel, grid, block, metrics)| {
            launch(
                Launch {
                    id: *id,
                    kernel,
                    grid,
                    block,
                },
                |name| metrics.iter().find(|(m, _)| m == name).map(|(_, v)| *v),
            )
        })
        .collect())
}
