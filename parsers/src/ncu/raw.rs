//! `--page raw`: one wide row per profiled kernel launch, a units row after
//! the header. Gives each kernel's sectors and requests per direction, the
//! share of each sector used, and SourceCounters' excessive-sector totals.

use super::{Columns, cell, figure, parse_number, rows};
use crate::error::ParseError;
use crate::model::{AccessStats, KernelCoalescing};

const LD_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
const ST_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
const LD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
const ST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
const LD_USED: &str = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct";
const ST_USED: &str = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct";
const DURATION: &str = "gpu__time_duration.sum";
// Tagged "byte" by ncu but the value is a sector count (its own rule text
// says "3670016 excessive sectors" for the same number).
const EXCESSIVE: &str = "derived__memory_l2_theoretical_sectors_global_excessive";
const THEORETICAL: &str = "memory_l2_theoretical_sectors_global";
const IDEAL: &str = "memory_l2_theoretical_sectors_global_ideal";

/// Every metric a launch's coalescing is read from.
pub(super) const METRICS: [&str; 10] = [
    LD_REQUESTS,
    ST_REQUESTS,
    LD_SECTORS,
    ST_SECTORS,
    LD_USED,
    ST_USED,
    DURATION,
    EXCESSIVE,
    THEORETICAL,
    IDEAL,
];

/// Whether a raw page carries the source-level sector totals (the
/// SourceCounters section's, or cudawatch's CoalescingSource section's):
/// the figures ncu's UncoalescedGlobalAccess rule judges.
pub fn has_source_totals(input: &[u8]) -> bool {
    header_has_any(input, &[EXCESSIVE, THEORETICAL])
}

/// Whether a raw page has the columns a launch's coalescing is read from
/// (l1tex's sector counts or the source-level totals), measured or not.
pub fn has_sector_columns(input: &[u8]) -> bool {
    header_has_any(input, &[LD_SECTORS, ST_SECTORS, THEORETICAL])
}

fn header_has_any(input: &[u8], names: &[&str]) -> bool {
    rows(input)
        .ok()
        .and_then(|rows| rows.into_iter().next())
        .is_some_and(|header| header.iter().any(|h| names.contains(&h.as_str())))
}

/// One profiled launch's identity.
pub(super) struct Launch<'a> {
    pub(super) id: u64,
    pub(super) kernel: &'a str,
    pub(super) grid: &'a str,
    pub(super) block: &'a str,
}

/// A launch's coalescing from its metrics by name (in base units), as the
/// raw page gives them in columns and the details page in rows.
pub(super) fn launch(l: Launch<'_>, value: impl Fn(&str) -> Option<f64>) -> KernelCoalescing {
    // A share of 0% beside counted sectors is dropped here (cp.async
    // loads: AccessStats::new says why).
    let load = AccessStats::new(value(LD_REQUESTS), value(LD_SECTORS), value(LD_USED));
    let store = AccessStats::new(value(ST_REQUESTS), value(ST_SECTORS), value(ST_USED));
    let requests = load.requests.unwrap_or(0.0) + store.requests.unwrap_or(0.0);
    let ideal_spr = value(IDEAL)
        .filter(|_| requests > 0.0)
        .map(|i| i / requests);
    // Without SourceCounters' sector totals, the l1tex sectors and the
    // share of each sector's bytes used still give the waste: a sector
    // 12.5% used is 87.5% wasted. A direction whose sectors were counted
    // but whose share is unknown (cp.async loads) leaves the waste
    // unknown: the other direction alone would be a share of the wrong
    // whole.
    let from_l1tex = || {
        let part = |s: &AccessStats| match (s.sectors, s.bytes_used_pct) {
            (Some(n), Some(pct)) => Some(Some((n, n * (1.0 - (pct / 100.0).clamp(0.0, 1.0))))),
            (Some(0.0), None) => Some(Some((0.0, 0.0))),
            (Some(_), None) => None,
            (None, _) => Some(None),
        };
        let parts: Vec<(f64, f64)> = [part(&load)?, part(&store)?]
            .into_iter()
            .flatten()
            .collect();
        (!parts.is_empty()).then(|| {
            parts
                .iter()
                .fold((0.0, 0.0), |(t, w), (n, e)| (t + n, w + e))
        })
    };
    let theoretical_total = value(THEORETICAL);
    let excessive_total = value(EXCESSIVE)
        .or_else(|| Some(value(THEORETICAL)? - value(IDEAL)?).filter(|e| *e >= 0.0));
    let (total_sectors, excessive_sectors) = match (theoretical_total, excessive_total) {
        (Some(t), Some(e)) => (Some(t), Some(e)),
        _ => from_l1tex().map_or((theoretical_total, excessive_total), |(t, e)| {
            (Some(t), Some(e.round()))
        }),
    };
    KernelCoalescing {
        launch_id: l.id,
        kernel: l.kernel.to_string(),
        grid: l.grid.to_string(),
        block: l.block.to_string(),
        load,
        store,
        duration_ns: value(DURATION),
        ideal_sectors_per_request: ideal_spr,
        // SourceCounters' excessive sectors, or the theoretical minus
        // the ideal, or what the l1tex figures imply.
        excessive_sectors,
        total_sectors,
        launched_from: None,
    }
}

/// A raw page as read: the launches whose figures were read, and each
/// launch that could not be (a row cut or shifted by a stray quote, a
/// figure no GPU prints), named with why: the rest of the page counts.
#[derive(Debug, Default)]
pub struct RawPage {
    /// The launches read.
    pub launches: Vec<KernelCoalescing>,
    /// `row 7 (launch 5, k): "4.194.304" is not a figure ncu prints`.
    pub unreadable: Vec<String>,
}

/// The coalescing figures of every launch in a raw page that could be read
/// (the unreadable ones left out: [`read`] names them).
pub fn parse(input: &[u8]) -> Result<Vec<KernelCoalescing>, ParseError> {
    read(input).map(|page| page.launches)
}

/// A raw page: the coalescing figures of every launch, each launch that
/// cannot be read skipped and named. Only a page that is no raw page (no
/// `ID` or `Kernel Name` column, no CSV) is an error.
pub fn read(input: &[u8]) -> Result<RawPage, ParseError> {
    let rows = rows(input)?;
    let Some(header) = rows.first() else {
        return Ok(RawPage::default());
    };
    let cols = Columns::new(header);
    let id = cols.require("ID")?;
    let kernel = cols.require("Kernel Name")?;
    let (grid, block) = (cols.find("Grid Size"), cols.find("Block Size"));
    // The units row (an empty ID) says what each column counts in:
    // `us`, `Mbyte`, `%` without --print-units base, base units with it.
    let units: Vec<f64> = rows
        .get(1)
        .filter(|r| cell(r, Some(id)).is_empty())
        .map(|r| {
            header
                .iter()
                .enumerate()
                .map(|(i, _)| super::unit_scale(cell(r, Some(i))))
                .collect()
        })
        .unwrap_or_else(|| vec![1.0; header.len()]);
    let mut page = RawPage::default();
    for (index, row) in rows.iter().enumerate().skip(1) {
        // The units row has an empty ID.
        let Some(launch_id) = parse_number(cell(row, Some(id))) else {
            continue;
        };
        let launch_of_row = Launch {
            id: launch_id as u64,
            kernel: cell(row, Some(kernel)),
            grid: cell(row, grid),
            block: cell(row, block),
        };
        let unreadable = |why: String| {
            format!(
                "row {} (launch {launch_id}, {}): {why}",
                index + 1,
                launch_of_row.kernel
            )
        };
        // A row longer than the header is as wrong as a shorter one: a
        // stray quote in a cell shifts every column after it.
        if row.len() != header.len() {
            let why = format!("{} cells where the header has {}", row.len(), header.len());
            page.unreadable.push(unreadable(why));
            continue;
        }
        // A launch that faulted while ncu profiled it (`==ERROR==
        // LaunchFailed`) has `nan` in every metric: measured nothing, which
        // every cell says, so it is kept without figures and the launches
        // before it are still read (sample-reports/beyond/faulting_launch/).
        let unmeasured = METRICS.iter().filter_map(|m| cols.find(m)).all(|i| {
            let c = cell(row, Some(i)).trim();
            c.eq_ignore_ascii_case("nan") || figure(c) == Ok(None)
        });
        if unmeasured {
            page.launches.push(launch(launch_of_row, |_| None));
            continue;
        }
        // A figure no GPU prints (a `nan` beside figures, a locale's
        // separator): the launch is not read, never read as less waste.
        if let Some((i, why)) = METRICS
            .iter()
            .filter_map(|m| cols.find(m))
            .find_map(|i| figure(cell(row, Some(i))).err().map(|e| (i, e)))
        {
            page.unreadable
                .push(unreadable(format!("{}: {why}", header[i])));
            continue;
        }
        let value = |name: &str| {
            let i = cols.find(name);
            let scale = i.and_then(|i| units.get(i)).copied().unwrap_or(1.0);
            parse_number(cell(row, i)).map(|v| v * scale)
        };
        page.launches.push(launch(launch_of_row, value));
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_shifted_by_a_stray_quote_is_refused_not_read_into_the_wrong_columns() {
        let header = "\"ID\",\"Kernel Name\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\"\n";
        let ok = format!("{header}\"0\",\"k\",\"4,096\"\n");
        assert_eq!(parse(ok.as_bytes()).unwrap()[0].load.sectors, Some(4096.0));
        // The kernel name's closing quote is lost: one cell too many.
        let shifted = format!("{ok}\"1\",\"k(int\",\"x)\",\"4,096\"\n");
        let page = read(shifted.as_bytes()).unwrap();
        assert_eq!(page.launches.len(), 1, "the readable launch counts");
        assert_eq!(
            page.unreadable,
            ["row 3 (launch 1, k(int): 4 cells where the header has 3"]
        );
    }

    #[test]
    fn one_nan_among_figures_leaves_its_launch_unread_and_named() {
        let header = "\"ID\",\"Kernel Name\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum\"\n";
        // Every metric nan: a launch ncu could not measure, kept without figures.
        let unmeasured = format!("{header}\"0\",\"k\",\"nan\",\"nan\"\n");
        let launches = parse(unmeasured.as_bytes()).unwrap();
        assert_eq!(launches[0].load.sectors, None);
        // A nan beside a figure is no page ncu writes: that launch is not
        // read (never read as a launch with less waste), the next one is.
        let mixed = format!("{header}\"0\",\"k\",\"4,096\",\"nan\"\n\"1\",\"j\",\"32\",\"0\"\n");
        let page = read(mixed.as_bytes()).unwrap();
        assert_eq!(page.launches.len(), 1);
        assert_eq!(page.launches[0].kernel, "j");
        assert_eq!(page.unreadable.len(), 1);
        let why = &page.unreadable[0];
        assert!(
            why.starts_with("row 2 (launch 0, k): ") && why.contains("\"nan\""),
            "{why}"
        );
    }
}
