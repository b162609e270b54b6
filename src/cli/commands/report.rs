//! `cudawatch report DIR|REPORT.json`: re-render a saved run, from its raw
//! artifacts or from a JSON report (e.g. a nightly sweep's, rendered later
//! as HTML or SARIF on another machine).

use crate::cli::args::ReportArgs;
use crate::cli::settings;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::judge::baseline;
use crate::render::style::Styles;
use crate::rundir;

/// The real run `report --example` renders: the H100's memcheck of
/// tests/gpu/oob_write.cu, built into the binary so that a `pip install`
/// user without a GPU (or a clone) has something to try.
const EXAMPLE: &str = include_str!("../../../docs/examples/oob_write.report.json");
/// How errors name it.
const EXAMPLE_NAME: &str = "the built-in example (docs/examples/oob_write.report.json)";

/// What `cudawatch report` was given.
enum Input {
    /// A JSON report.
    Report,
    /// A run directory (it has `run.json`).
    RunDir,
    /// Neither, with what to do instead.
    Wrong(String),
}

/// Tells a run directory and a JSON report from the usual mistakes: a
/// path that is not there, a sweep's directory, tool output (for `parse`).
fn what_it_is(path: &std::path::Path) -> Input {
    let shown = path.display();
    if path.is_dir() {
        if path.join("run.json").is_file() {
            Input::RunDir
        } else if path.join("sweep.toml").is_file() {
            Input::Wrong(format!(
                "a sweep directory, not a run's: cudawatch merge {shown} renders it"
            ))
        } else {
            Input::Wrong(format!(
                "not a run directory (it has no run.json); for a folder of compute-sanitizer \
                 or ncu output use cudawatch parse {shown}"
            ))
        }
    } else if !path.exists() {
        Input::Wrong(
            "no such file or directory: give a run directory (cudawatch-runs/<run>) or its report.json"
                .into(),
        )
    } else if !path.is_file() {
        // A FIFO would wait for a writer forever, a device never end.
        Input::Wrong(
            "not a regular file (a FIFO or device is never read): save the report to a file first"
                .into(),
        )
    } else if looks_like_tool_output(path) {
        Input::Wrong(format!(
            "tool output, not a cudawatch report: cudawatch parse {shown} reads it"
        ))
    } else {
        Input::Report
    }
}

/// XML, CSV or text from the tools rather than a JSON report.
fn looks_like_tool_output(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let first = head[..n].iter().find(|b| !b.is_ascii_whitespace());
    first.is_some_and(|b| *b != b'{')
}

/// A merged sweep's JSON report, read as a run's report is (bounded).
fn read_sweep_report(
    path: &std::path::Path,
) -> Result<cudawatch_model::SweepReport, ExpectedError> {
    let input = |message: String| ExpectedError::Input {
        path: path.display().to_string(),
        message,
    };
    let bytes = crate::safe_files::read_named_at_most(path, baseline::MAX_REPORT_BYTES)
        .map_err(|e| input(e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| input(format!("not a cudawatch sweep report: {e}")))
}

/// Whether a JSON file is a sweep's `report.json` (it has a `sweep_id`).
fn is_sweep_report(path: &std::path::Path) -> bool {
    crate::safe_files::read_named_at_most(path, baseline::MAX_REPORT_BYTES)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .is_some_and(|v| v.get("sweep_id").is_some())
}

/// Runs `cudawatch report`; returns the exit code.
pub fn run(args: &ReportArgs, styles: Styles) -> Result<i32, ExpectedError> {
    let policy = settings::policy(&args.output)?;
    let output = settings::output(&args.output)?
        .human_on_stdout()
        .brief_beside_machine_output();
    let Some(dir) = args.dir.as_deref() else {
        let example = baseline::report_from_text(std::path::Path::new(EXAMPLE_NAME), EXAMPLE)?;
        return Ok(super::judge_and_render(
            example, &policy, &output, styles, None,
        ));
    };
    // A JSON report from someone else is rendered as it is: it names files,
    // and nothing it names is read.
    let report = match what_it_is(dir) {
        // A merged sweep's JSON (`merge --format json > nightly.json`) is
        // rendered as the sweep it is, as saved.
        Input::Report if is_sweep_report(dir) => {
            let report = read_sweep_report(dir)?;
            let code = super::sweep::render_sweep(&report, &output, styles);
            return Ok(read_later(code));
        }
        Input::Report => baseline::read_report(dir)?,
        Input::RunDir => rundir::assemble(dir, &settings::source_root(&args.output))?,
        Input::Wrong(why) => {
            return Err(ExpectedError::Input {
                path: dir.display().to_string(),
                message: why,
            });
        }
    };
    let code = super::judge_and_render(report, &policy, &output, styles, None);
    Ok(read_later(code))
}

/// The exit code of a saved run read later. Its Ctrl-C was the run's, not
/// this command's: a stopped run is one that did not check everything (3),
/// so a CI step that renders it afterwards does not read as cancelled (130).
fn read_later(code: i32) -> i32 {
    if code == exit_codes::INTERRUPTED {
        exit_codes::INCONCLUSIVE
    } else {
        code
    }
}
