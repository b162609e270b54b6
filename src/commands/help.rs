//! `cudawatch completions SHELL` and `cudawatch man`, generated from the
//! clap definitions so they never drift from the real flags.

use clap::CommandFactory;

use crate::cli::Args;
use crate::errors::ExpectedError;
use crate::exit_codes;

/// Prints the completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<i32, ExpectedError> {
    let mut command = Args::command();
    clap_complete::generate(shell, &mut command, "cudawatch", &mut std::io::stdout());
    Ok(exit_codes::CLEAN)
}

/// Prints the man page on stdout.
pub fn man() -> Result<i32, ExpectedError> {
    let page = clap_mangen::Man::new(Args::command());
    match page.render(&mut std::io::stdout()) {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(ExpectedError::Write {
            target: "stdout".into(),
            message: e.to_string(),
        }),
        _ => Ok(exit_codes::CLEAN),
    }
}
