//! Where the memory stage's artifacts lie in its folder, and its rerun with
//! expandable segments read back: did the remedy for fragmentation help?

use std::path::{Path, PathBuf};

use cudawatch_model::ProcessEnd;

use super::StageRecord;
use super::files;

/// `Some(true)` when the rerun finished (exit 0, no OOM seen by its hook),
/// `Some(false)` when it still failed, `None` when there was none.
pub fn expandable_outcome(stage_dir: &Path, record: &StageRecord) -> Option<bool> {
    let (_, end) = record
        .imports
        .iter()
        .find(|(name, _)| name == "expandable")?;
    let dir = expandable_dir(stage_dir);
    let hook = files::read(&dir.join("hook.json"))
        .ok()
        .and_then(|b| cudawatch_parsers::memory::hook_facts(&b).ok());
    // Without its hook's report, a clean exit of a program that ran out
    // of memory before is still the evidence.
    Some(*end == ProcessEnd::Exited(0) && hook.is_none_or(|h| h.ooms == 0))
}

/// Where the rerun with expandable segments writes.
pub fn expandable_dir(stage_dir: &Path) -> PathBuf {
    stage_dir.join("expandable")
}

/// The OOM files the hook wrote, in order (`oom-1.json`, ...; it writes 5 at most).
pub fn oom_files(stage_dir: &Path) -> Vec<PathBuf> {
    (1..=5)
        .map(|n| stage_dir.join(format!("oom-{n}.json")))
        .take_while(|p| p.exists())
        .collect()
}

/// What the hook left in a stage's folder: its exit report (absent when it
/// could not run or the program never got to exit) and the OOM files.
pub fn hook_artifacts(
    stage_dir: &Path,
) -> (Option<cudawatch_parsers::memory::HookFacts>, Vec<Vec<u8>>) {
    let hook = files::read(&stage_dir.join("hook.json"))
        .ok()
        .and_then(|b| cudawatch_parsers::memory::hook_facts(&b).ok());
    let ooms = oom_files(stage_dir)
        .iter()
        .filter_map(|p| files::read(p).ok())
        .collect();
    (hook, ooms)
}
