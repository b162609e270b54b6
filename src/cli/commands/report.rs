//! `cudawatch report DIR|REPORT.json`: re-render a saved run, from its raw
//! artifacts or from a JSON report (e.g. a nightly sweep's, rendered later
//! as HTML or SARIF on another machine).

use crate::cli::args::ReportArgs;
use crate::cli::settings;
use crate::errors::ExpectedError;
use crate::judge::baseline;
use crate::render::style::Styles;
use crate::rundir;

/// Runs `cudawatch report`; returns the exit code.
pub fn run(args: &ReportArgs, styles: Styles) -> Result<i32, ExpectedError> {
    let policy = settings::policy(&args.output)?;
    let output = settings::output(&args.output)?.human_on_stdout();
    // A JSON report from someone else is rendered as it is: it names files,
    // and nothing it names is read.
    let report = if args.dir.is_file() {
        baseline::read_report(&args.dir)?
    } else {
        rundir::assemble(&args.dir, &settings::source_root(&args.output))?
    };
    Ok(super::judge_and_render(
        report, &policy, &output, styles, None,
    ))
}
