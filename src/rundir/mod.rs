//! The run directory: every raw artifact, one `stage.json` per stage, and
//! `report.json`. A report is always assembled from this directory, during
//! `cudawatch run` after each stage and later by `cudawatch report`, so the
//! saved run and the live one can never disagree.
//!
//! ```text
//! <run>/run.json                  target, planned stages, cudawatch version
//! <run>/plain/{stage.json,stdout,stderr}
//! <run>/memcheck/{stage.json,stdout,stderr,memcheck.xml}   (likewise racecheck, initcheck, synccheck)
//! <run>/ncu/{stage.json,stdout,stderr,profile.ncu-rep,raw.csv,details.csv,source-N.csv}
//! <run>/report.json
//! ```

mod assemble;
pub mod classify;
mod records;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::errors::ExpectedError;

pub use assemble::{Assembler, assemble};
pub use records::{RunRecord, StageRecord};

/// Reads a JSON file of the run directory.
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, ExpectedError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExpectedError::RunDir {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| ExpectedError::RunDir {
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
    std::fs::write(path, text + "\n").map_err(|e| ExpectedError::Write {
        target: path.display().to_string(),
        message: e.to_string(),
    })
}
