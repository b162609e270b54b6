//! One module per subcommand, and the ending they share.

pub mod config;
pub mod diff;
pub mod help;
pub mod parse;
pub mod report;
pub mod run;

use cudawatch_parsers::model::Report;

use crate::cli::OutputArgs;
use crate::errors::ExpectedError;
use crate::gate;
use crate::render::{self, style::Style};

/// Marks the baseline's sites, judges the checklist, renders every
/// requested format, and returns
/// the exit code the report earns: the same ending for run, report and parse.
pub fn conclude(
    mut report: Report,
    output: &OutputArgs,
    style: Style,
) -> Result<i32, ExpectedError> {
    // Sources are read here, not in the renderers, so every format shows
    // the same lines; snippets a saved report already carries are kept.
    crate::sources::attach(&mut report);
    if let Some(path) = &output.suppressions {
        let rules = crate::suppress::load(path)?;
        crate::suppress::apply(&mut report, &rules, &crate::suppress::today());
    }
    if let Some(path) = &output.baseline {
        let baseline = gate::read_report(path)?;
        gate::apply_baseline(&mut report, &baseline);
    }
    let thresholds = crate::checklist::Thresholds {
        max_wasted_sectors_pct: output.max_wasted_sectors,
        max_line_wasted_sectors_pct: output.max_line_wasted_sectors,
        max_excess_sectors_per_request: output.max_excess_sectors_per_request,
        min_memory_headroom_pct: output.min_memory_headroom,
    };
    report.checklist = crate::checklist::judge(&report, thresholds);
    render::render(&report, output, style)?;
    Ok(gate::exit_code(&report, output.fail_on))
}
