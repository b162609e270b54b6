//! One module per subcommand.

pub mod parse;
pub mod report;
pub mod run;
