//! The command line: clap's arguments, `cudawatch.toml`, the settings they
//! resolve to, the progress display, and one module per subcommand.

pub mod args;
pub mod commands;
pub mod config_file;
pub mod progress;
pub mod settings;
pub mod sweep_progress;
