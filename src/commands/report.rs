//! `cudawatch report DIR`: re-render a saved run from its raw artifacts.

use crate::cli::ReportArgs;
use crate::errors::ExpectedError;
use crate::render::style::Style;
use crate::rundir;

/// Runs `cudawatch report`; returns the exit code.
pub fn run(args: &ReportArgs, style: Style) -> Result<i32, ExpectedError> {
    let report = rundir::assemble(&args.dir)?;
    super::conclude(report, &args.output, style)
}
