//! Where the memory stage's artifacts lie in its folder, the processes its
//! OOM names looked up, and its rerun with expandable segments read back:
//! did the remedy for fragmentation help?

use std::path::{Path, PathBuf};

use cudawatch_model::ProcessEnd;

use crate::safe_files as files;
use crate::tools::StageRecord;

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

/// The OOM files the hook wrote, by process and then in order
/// (`oom-PID-1.json`, ...: each process of a multi-process program writes
/// its own, 5 at most; `oom-N.json` of hooks before that), at most
/// [`OOM_FILES_AT_MOST`].
pub fn oom_files(stage_dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<((u64, u64), PathBuf)> = std::fs::read_dir(stage_dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let key = oom_file_key(&name)?;
                    Some((key, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
        .into_iter()
        .take(OOM_FILES_AT_MOST)
        .map(|(_, p)| p)
        .collect()
}

/// How many OOM files are read: 5 for each of 8 ranks.
pub const OOM_FILES_AT_MOST: usize = 40;

/// `oom-1234-2.json` → (1234, 2); `oom-2.json` → (0, 2).
fn oom_file_key(name: &str) -> Option<(u64, u64)> {
    let stem = name.strip_prefix("oom-")?.strip_suffix(".json")?;
    match stem.split_once('-') {
        Some((pid, n)) => Some((pid.parse().ok()?, n.parse().ok()?)),
        None => Some((0, stem.parse().ok()?)),
    }
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

/// How many other processes are named; the rest are counted.
pub const NAMED_AT_MOST: usize = 10;

/// The executable names of the processes PyTorch's OOM message says held
/// GPU memory ("Process 1248 has 77.17 GiB memory in use"), read from
/// /proc right after the stage, into `processes.json`: their names only,
/// never their arguments (another user's `--token=...`), at most
/// [`NAMED_AT_MOST`] (a message can name every process of a machine); a
/// process of this same cudawatch run (another stage) is said to be one.
pub fn name_other_processes(stage_dir: &Path) {
    let Ok(stderr) = files::read_at_most(&stage_dir.join("stderr"), 1 << 24) else {
        return;
    };
    let me = std::process::id();
    let named: Vec<(u32, String)> =
        cudawatch_parsers::memory::other_processes(&String::from_utf8_lossy(&stderr))
            .into_iter()
            .take(NAMED_AT_MOST)
            .filter_map(|p| {
                let name = crate::tools::procs::executable_of(p.pid);
                let ours = crate::tools::procs::descends_from(p.pid, me);
                let name = if ours {
                    format!("{name}, another stage of this cudawatch run")
                } else {
                    name
                };
                (!name.is_empty()).then_some((p.pid, name))
            })
            .collect();
    if !named.is_empty()
        && let Ok(json) = serde_json::to_vec(&named)
    {
        let _ = files::write_atomic(&stage_dir.join("processes.json"), &json);
    }
}
