//! Errors a user can act on, each mapped to an exit code. Messages are
//! lower-case fragments that name the file or flag to fix.

use std::fmt;

use crate::exit_codes;

/// An error that ends the command.
#[derive(Debug)]
pub enum ExpectedError {
    /// An input file could not be read or understood.
    Input { path: String, message: String },
    /// The run directory could not be created or read.
    RunDir { path: String, message: String },
    /// Nothing to run.
    NoProgram,
    /// The program to run cannot be found or run.
    ProgramNotFound(String),
    /// A report could not be written.
    Write { target: String, message: String },
    /// Something the run needs is wrong outside the command line: a file a
    /// flag names (sweep file, config file), the environment (Slurm's
    /// variables), or the machine (no async runtime, no own executable).
    Setup(String),
    /// The command line asks for something impossible.
    Usage(String),
}

impl ExpectedError {
    /// The error of reading a file a flag named, naming the flag:
    /// "cannot read --baseline nope.json: ...".
    pub fn for_flag(self, flag: &str) -> ExpectedError {
        match self {
            ExpectedError::Input { path, message } => ExpectedError::Input {
                path: format!("{flag} {path}"),
                message,
            },
            other => other,
        }
    }

    /// The exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            ExpectedError::Input { .. }
            | ExpectedError::RunDir { .. }
            | ExpectedError::NoProgram
            | ExpectedError::ProgramNotFound(_)
            | ExpectedError::Setup(_) => exit_codes::SETUP_ERROR,
            ExpectedError::Write { .. } => exit_codes::WRITE_ERROR,
            ExpectedError::Usage(_) => exit_codes::USAGE,
        }
    }
}

impl fmt::Display for ExpectedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpectedError::Input { path, message } => write!(f, "cannot read {path}: {message}"),
            ExpectedError::RunDir { path, message } => write!(f, "run directory {path}: {message}"),
            ExpectedError::NoProgram => f.write_str(
                "no program to run: give it after `--`, e.g. cudawatch run -- python train.py",
            ),
            ExpectedError::ProgramNotFound(message) => f.write_str(message),
            ExpectedError::Write { target, message } => {
                write!(f, "cannot write {target}: {message}")
            }
            ExpectedError::Setup(message) | ExpectedError::Usage(message) => f.write_str(message),
        }
    }
}

/// toml's message spans several lines (position, a snippet, the problem);
/// keeps the position and the problem on one line.
pub fn toml_one_line(error: &toml::de::Error) -> String {
    let message = error.to_string();
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match (lines.first(), lines.last()) {
        (Some(first), Some(last)) if first != last => format!("{first}: {last}"),
        _ => message.trim().to_string(),
    }
}
