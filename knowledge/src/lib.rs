//! What an error means and what to do about it: the error enums of the
//! CUDA 13 runtime and driver and of cuBLAS, cuFFT, cuSOLVER, cuRAND,
//! cuDNN and NCCL, read from a verbatim snapshot of their headers
//! (`sample-reports/error-tables/`, captured on the GPU machine), the
//! strings the libraries print for each code, the runtime's numbering
//! before CUDA 10.1, and cudawatch's own advice: usual causes and the
//! stage that finds the root cause.
//!
//! Pure: text in, answers out. Used by `cudawatch explain`, by `doctor`,
//! and by every report format to link a finding to its explanation.

#![deny(missing_docs)]

pub mod advice;
pub mod enums;
pub mod legacy;
pub mod lookup;
pub mod strings;

pub use lookup::{Answer, Explanation, Knowledge};

/// The snapshot of the headers' error enums.
pub const ENUMS: &str = include_str!("../../sample-reports/error-tables/error-enums.txt");
/// What each library's own string function returns for each code.
pub const STRINGS: &str = include_str!("../../sample-reports/error-tables/error-strings.tsv");

/// The anchor of a topic (an error name or a finding kind) in
/// `docs/errors.md`: GitHub's, lower case.
pub fn anchor(topic: &str) -> String {
    topic.to_ascii_lowercase()
}

/// The link to a topic's explanation in `docs/errors.md` (one anchor per
/// code and per finding kind) under a documentation base URL, where the
/// user or the build published the docs (`CUDAWATCH_DOCS_URL`). There is
/// no default: a guessed address would send people to a stranger's page.
pub fn link(base: &str, topic: &str) -> String {
    format!("{}/errors.md#{}", base.trim_end_matches('/'), anchor(topic))
}
