//! One module per subcommand, and the ending they share.

pub mod config;
pub mod diff;
pub mod doctor;
pub mod explain;
pub mod help;
pub mod parse;
pub mod report;
pub mod run;
pub mod suppress;
pub mod sweep;

use std::path::Path;

use cudawatch_model::Report;

use crate::exit_codes;
use crate::judge::{self, Policy};
use crate::render::{self, OutputSettings, style::Styles};

/// Marks what the policy accepts, judges, renders every requested format,
/// and returns the exit code: the same ending for run, report and parse.
/// A report that cannot be written is said on one line and ranked with the
/// judgement's own code, so an interrupted run still exits 130.
/// `sources` is where snippets may be read from, for reports made here from
/// captures; a received report renders the snippets it carries.
pub fn judge_and_render(
    mut report: Report,
    policy: &Policy,
    output: &OutputSettings,
    styles: Styles,
    sources: Option<&Path>,
) -> i32 {
    // Sources are read here, not in the renderers, so every format shows
    // the same lines; snippets a report already carries are kept.
    if let Some(root) = sources {
        crate::rundir::attach_sources(&mut report, root, None);
    }
    judge::accept(&mut report, policy);
    let judgement = judge::judge(&report, policy);
    match render::render(&report, &judgement, output, styles) {
        Ok(()) => judgement.exit_code,
        Err(error) => {
            crate::render::stderr::error(&error.to_string());
            exit_codes::worst(judgement.exit_code, error.exit_code())
        }
    }
}
