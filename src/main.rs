//! cudawatch: runs a CUDA program under compute-sanitizer and Nsight
//! Compute and folds every tool's output into one report.
//!
//! The folders follow the data: `cli` (arguments, settings, commands) →
//! `plan` and `tools` (what to run) → `supervisor` (running it) → `rundir`
//! (what it left, assembled into a report) → `judge` (what it adds up to)
//! → `render` (every format). See `docs/architecture.md`.

mod cli;
mod doctor;
mod errors;
mod executables;
mod exit_codes;
mod judge;
mod plan;
mod render;
mod rundir;
mod safe_files;
mod supervisor;
mod sweep;
mod tools;
mod words;

use cli::args::Command;
use cli::commands;

fn main() {
    let resolved = match cli::config_file::parse_command_line(std::env::args_os().collect()) {
        Ok(resolved) => resolved,
        Err(error) => {
            // Config files and reports may be someone else's: their words
            // reach the terminal neutralised.
            render::stderr::error(&error.to_string());
            std::process::exit(error.exit_code());
        }
    };
    let args = &resolved.args;
    let styles = render::style::Style::from_env(cli::settings::color(args.color));
    let result = match &args.command {
        Command::Config(a) => commands::config::run(a, &resolved),
        Command::Run(a) => commands::run::run(a, styles),
        Command::Parse(a) => commands::parse::run(a, styles),
        Command::Report(a) => commands::report::run(a, styles),
        Command::Diff(a) => commands::diff::run(a, styles),
        Command::Completions { shell } => commands::help::completions(*shell),
        Command::Man(a) => commands::help::man(a),
        Command::Suppress(a) => commands::suppress::run(a),
        Command::Sweep(a) => commands::sweep::sweep(a, styles),
        Command::Merge(a) => commands::sweep::merge(a, styles),
        Command::Explain(a) => commands::explain::run(a, styles),
        Command::Doctor(a) => commands::doctor::run(a, styles),
    };
    let code = match result {
        Ok(code) => code,
        Err(error) => {
            let error = match &resolved.file {
                Some(file) => file.attribute(error),
                None => error,
            };
            render::stderr::error(&error.to_string());
            error.exit_code()
        }
    };
    std::process::exit(code);
}
