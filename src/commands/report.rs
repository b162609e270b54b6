//! `cudawatch report DIR|REPORT.json`: re-render a saved run, from its raw
//! artifacts or from a JSON report (e.g. a nightly sweep's, rendered later
//! as HTML or SARIF on another machine).

use crate::cli::ReportArgs;
use crate::errors::ExpectedError;
use crate::render::style::Style;
use crate::{gate, rundir};

/// Runs `cudawatch report`; returns the exit code.
pub fn run(args: &ReportArgs, style: Style) -> Result<i32, ExpectedError> {
    let report = if args.dir.is_file() {
        gate::read_report(&args.dir)?
    } else {
        rundir::assemble(&args.dir)?
    };
    super::conclude(report, &args.output, style)
}
