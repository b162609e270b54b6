//! `cudawatch diff OLD NEW`: two reports compared by `judge::diff`, written
//! by `render::diff`.

use crate::cli::args::{DiffArgs, Format};
use crate::cli::settings;
use crate::errors::ExpectedError;
use crate::judge::{Policy, baseline, diff};
use crate::render::Exporter;
use crate::render::diff::{DiffJson, DiffText};
use crate::render::style::Styles;

/// The program a run's report is of: its Python script (`train.py`), else
/// its executable's name; `None` for a report of parsed files. Arguments
/// may differ between two runs of one program (`--lr`), the program not.
fn program_of(target: &[String]) -> Option<String> {
    let base = |word: &String| {
        std::path::Path::new(word)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    };
    target
        .iter()
        .find(|w| w.ends_with(".py"))
        .or_else(|| target.first())
        .and_then(base)
}

/// Runs `cudawatch diff`; exits 1 when NEW has sites OLD did not at or
/// above `--fail-on`, 3 when a site may be gone only because its tool did
/// not check NEW.
pub fn run(args: &DiffArgs, styles: Styles) -> Result<i32, ExpectedError> {
    let mut old = baseline::read_report(&args.old)?;
    let mut new = baseline::read_report(&args.new)?;
    if !args.different_programs
        && let (Some(before), Some(after)) = (program_of(&old.target), program_of(&new.target))
        && before != after
    {
        return Err(ExpectedError::Usage(format!(
            "{} is a report of {}, {} of {}: a diff of two programs lists one's bugs as fixed; \
             compare two runs of one program, or pass --different-programs",
            args.old.display(),
            crate::render::untrusted::clean(&before),
            args.new.display(),
            crate::render::untrusted::clean(&after)
        )));
    }
    let policy = Policy {
        fail_on: settings::fail_on(args.fail_on),
        ..Policy::default()
    };
    // Judged as a run's gate judges them: a run directory's report.json is
    // saved before judging, and without owners and root causes a race
    // inside cuDNN, or an API error that only follows a fault, would fail
    // the diff where the run itself passed.
    crate::judge::accept(&mut old, &policy);
    crate::judge::accept(&mut new, &policy);
    let diff = diff::compare(&old, &new);
    // The diff is the product: on stdout, as JSON or as text.
    if args.format == Format::Json {
        crate::render::write_stdout(&DiffJson.render(&diff))?;
    } else {
        let text = DiffText {
            style: styles.stdout,
        }
        .render(&diff);
        crate::render::write_text(&String::from_utf8_lossy(&text))?;
    }
    Ok(diff::exit_code(&diff, &policy))
}
