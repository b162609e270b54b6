//! cudawatch: runs a CUDA program under compute-sanitizer and Nsight
//! Compute and folds every tool's output into one report.

mod checklist;
mod classify;
mod cli;
mod commands;
mod config;
mod errors;
mod exit_codes;
mod gate;
mod gpu_memory;
mod plan;
mod progress;
mod render;
mod rundir;
mod sources;
mod supervisor;
mod suppress;

fn main() {
    let resolved = match config::parse_command_line(std::env::args_os().collect()) {
        Ok(resolved) => resolved,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::exit(error.exit_code());
        }
    };
    let args = &resolved.args;
    let style = render::style::Style::from_env(args.color);
    let result = match &args.command {
        cli::Command::Config(a) => commands::config::run(a, &resolved),
        cli::Command::Run(a) => commands::run::run(a, style),
        cli::Command::Parse(a) => commands::parse::run(a, style),
        cli::Command::Report(a) => commands::report::run(a, style),
        cli::Command::Diff(a) => commands::diff::run(a, style),
        cli::Command::Completions { shell } => commands::help::completions(*shell),
        cli::Command::Man => commands::help::man(),
        cli::Command::Suppress(a) => crate::suppress::write_rule(a),
    };
    let code = match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            error.exit_code()
        }
    };
    std::process::exit(code);
}
