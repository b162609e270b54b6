//! `cudawatch doctor`: the environment checks, on stdout (its product);
//! exit 1 when one finds a problem, so a CI job can stop before an hour
//! of runs that could not check anything.

use cudawatch_model::EnvStatus;

use crate::cli::args::{DoctorArgs, Format};
use crate::doctor::{self, DoctorOptions};
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::render::{self, style::Styles};
use crate::tools::ToolPaths;

/// Runs `cudawatch doctor`; returns the exit code.
pub fn run(args: &DoctorArgs, styles: Styles) -> Result<i32, ExpectedError> {
    if !args.quick && args.format == Format::Table {
        render::stderr::line(
            "doctor: checking; the probes run compute-sanitizer and ncu on a tiny program (--quick skips them)",
        );
    }
    let environment = doctor::diagnose(&DoctorOptions {
        probe: !args.quick,
        python: args.python.clone(),
        ask_python: !args.quick || args.python.is_some(),
        tools: ToolPaths::resolve(args.compute_sanitizer.as_deref(), args.ncu.as_deref()),
    });
    match args.format {
        Format::Json => {
            let mut bytes = serde_json::to_vec_pretty(&environment).unwrap_or_default();
            bytes.push(b'\n');
            render::write_stdout(&bytes)?;
        }
        Format::Table => {
            render::write_text(&render::doctor::terminal(&environment, styles.stdout))?
        }
    }
    Ok(
        if environment
            .checks
            .iter()
            .any(|c| c.status == EnvStatus::Problem)
        {
            exit_codes::FINDINGS
        } else {
            exit_codes::CLEAN
        },
    )
}
