//! `cudawatch completions SHELL` and `cudawatch man`, generated from the
//! clap definitions so they never drift from the real flags.

use crate::cli::config_file::command;
use crate::errors::ExpectedError;
use crate::exit_codes;

/// Prints the completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<i32, ExpectedError> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "cudawatch", &mut script);
    crate::render::write_stdout(&script)?;
    Ok(exit_codes::CLEAN)
}

/// Prints the man page on stdout.
pub fn man() -> Result<i32, ExpectedError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command())
        .render(&mut page)
        .expect("rendering into memory cannot fail");
    crate::render::write_stdout(&page)?;
    Ok(exit_codes::CLEAN)
}
