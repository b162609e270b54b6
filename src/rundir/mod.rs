//! The run directory: every raw artifact, one `stage.json` per stage, and
//! `report.json`. A report is always assembled from this directory, during
//! `cudawatch run` after each stage and later by `cudawatch report`, so the
//! saved run and the live one can never disagree.
//!
//! ```text
//! <run>/run.json                  target, planned stages, cudawatch version
//! <run>/plain/{stage.json,stdout,stderr}
//! <run>/memcheck/{stage.json,stdout,stderr,memcheck.xml}   (likewise racecheck, initcheck, synccheck)
//! <run>/initcheck/host-stacks.{xml,stdout,stderr}   its rerun for launching lines, when it had one
//! <run>/ncu/{stage.json,stdout,stderr,profile.ncu-rep,raw.csv,details.csv,source-N.csv}
//! <run>/report.json
//! ```

mod assemble;
pub mod environment;
mod project_paths;
mod records;
pub mod runtime_sources;
pub mod snippets;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::errors::ExpectedError;

pub use assemble::{Assembler, assemble};
pub use records::RunRecord;

/// Makes `dir` this run's own: creates it, refuses it when it already holds
/// anything (a run may only ever read what it wrote: an old `memcheck.xml`
/// would pass for this run's), and claims it by creating `run.json` with
/// O_EXCL, so two runs started into one directory cannot both have it.
pub fn claim(dir: &Path, run: &RunRecord) -> Result<(), ExpectedError> {
    let refuse = |message: String| ExpectedError::RunDir {
        path: dir.display().to_string(),
        message,
    };
    std::fs::create_dir_all(dir).map_err(|e| refuse(e.to_string()))?;
    let mut entries = std::fs::read_dir(dir).map_err(|e| refuse(e.to_string()))?;
    if entries.next().is_some() {
        return Err(refuse(
            "is not empty: a run only reads what it wrote itself; give a new --out-dir or remove this one"
                .into(),
        ));
    }
    let text = serde_json::to_string_pretty(run).map_err(|e| refuse(e.to_string()))? + "\n";
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join("run.json"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => refuse(
                "another run started into it at the same moment; give each run its own --out-dir"
                    .into(),
            ),
            _ => refuse(e.to_string()),
        })
}

/// Reads a JSON file of the run directory.
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, ExpectedError> {
    let limit = crate::judge::baseline::MAX_REPORT_BYTES;
    let bytes =
        crate::safe_files::read_at_most(path, limit).map_err(|e| ExpectedError::RunDir {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    serde_json::from_slice(&bytes).map_err(|e| ExpectedError::RunDir {
        path: path.display().to_string(),
        message: format!("not a cudawatch record: {e}"),
    })
}

/// Writes a JSON file of the run directory.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), ExpectedError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| ExpectedError::Write {
        target: path.display().to_string(),
        message: e.to_string(),
    })?;
    crate::safe_files::create(path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, (text + "\n").as_bytes()))
        .map_err(|e| ExpectedError::Write {
            target: path.display().to_string(),
            message: e.to_string(),
        })
}

/// Places findings in the user's source and keeps the lines around them:
/// a run made in another folder of the project (`made_in`: another clone,
/// a CI runner) has its files taken for the same files under `root` first,
/// kernels compiled at run time are moved to the Python line holding their
/// source string, then every located finding gets its snippet, and last
/// the files under the root are named from it (`./tests/oob.cu`).
pub fn attach_sources(
    report: &mut cudawatch_model::Report,
    root: &std::path::Path,
    made_in: Option<&std::path::Path>,
) {
    if let Some(made_in) = made_in {
        project_paths::moved(report, made_in, root);
    }
    runtime_sources::map(report, root);
    snippets::attach(report, root);
    project_paths::relative_to_root(report, root);
}
