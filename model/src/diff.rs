//! Two reports compared by their stable site ids (`cudawatch diff`).

use serde::{Deserialize, Serialize};

use crate::Site;

/// What changed between OLD and NEW, as `diff --format json` prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportDiff {
    /// In NEW only.
    pub new: Vec<Site>,
    /// In OLD only.
    pub fixed: Vec<Site>,
    /// In both (as NEW has them).
    pub unchanged: Vec<Site>,
    /// In OLD only, but the tool that found them did not check NEW to its
    /// end (not run, missing, inconclusive): gone from NEW proves nothing.
    pub not_rechecked: Vec<Site>,
}
