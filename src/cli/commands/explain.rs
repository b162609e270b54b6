//! `cudawatch explain CODE|NAME|MESSAGE`: what an error means, whether the
//! process must restart, the usual causes and what to run next. With no
//! argument (or `-`) the text comes from stdin, so a whole traceback can
//! be piped in. `--all` prints the reference, docs/errors.md.

use std::io::Read;

use crate::cli::args::{ExplainArgs, Format};
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::judge::explain_links::knowledge;
use crate::render::{self, style::Styles};

/// Runs `cudawatch explain`; returns the exit code: 0 when something was
/// explained, 1 when nothing matched.
pub fn run(args: &ExplainArgs, styles: Styles) -> Result<i32, ExpectedError> {
    if args.all {
        render::write_text(&render::explain::reference(knowledge()))?;
        return Ok(exit_codes::CLEAN);
    }
    let query = if args.query.is_empty() || args.query == ["-"] {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            // Not a silent wait: say what it waits for.
            render::stderr::line(
                "paste the error message or traceback, then press Ctrl-D \
                 (or give it as an argument: cudawatch explain 700)",
            );
        }
        let mut text = String::new();
        std::io::stdin()
            .take(16 << 20)
            .read_to_string(&mut text)
            .map_err(|e| ExpectedError::Input {
                path: "stdin".into(),
                message: e.to_string(),
            })?;
        text
    } else {
        args.query.join(" ")
    };
    let answer = explain_query(&query);
    match args.format {
        Format::Json => {
            let mut bytes = serde_json::to_vec_pretty(&answer).unwrap_or_default();
            bytes.push(b'\n');
            render::write_stdout(&bytes)?;
        }
        Format::Table => {
            render::write_text(&render::explain::terminal(&answer, styles.stdout))?;
        }
    }
    if answer.explanations.is_empty() {
        if let Some(name) = knowledge().nearest_name(&query) {
            render::stderr::line(&format!(
                "did you mean {}? cudawatch explain {}",
                render::untrusted::clean(&name),
                render::untrusted::clean(&name)
            ));
        }
        render::stderr::line(
            "nothing matched: give a number (700), a name (cudaErrorIllegalAddress, CUBLAS_STATUS_EXECUTION_FAILED), a finding kind (invalid_access), or paste the message",
        );
        return Ok(exit_codes::FINDINGS);
    }
    Ok(exit_codes::CLEAN)
}

/// The answer to `query`; an exception named by a GPU core dump (`Warp
/// Illegal Address`) is explained as the CUDA error the program got for it.
fn explain_query(query: &str) -> cudawatch_knowledge::Answer {
    let Some(error) = cudawatch_parsers::coredump::exception_error(query) else {
        return knowledge().explain(query);
    };
    let mut answer = knowledge().explain(error);
    answer.notes.insert(
        0,
        format!(
            "\"{}\" is an exception a GPU core dump names (the coredump stage); the program got \
             {error} for it",
            query.trim()
        ),
    );
    answer
}
