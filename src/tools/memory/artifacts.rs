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

/// The command names of the processes PyTorch's OOM message says held
/// GPU memory ("Process 1248 has 77.17 GiB memory in use"), read from
/// /proc right after the stage, into `processes.json`.
pub fn name_other_processes(stage_dir: &Path) {
    let Ok(stderr) = files::read_at_most(&stage_dir.join("stderr"), 1 << 24) else {
        return;
    };
    let named: Vec<(u32, String)> =
        cudawatch_parsers::memory::other_processes(&String::from_utf8_lossy(&stderr))
            .into_iter()
            .filter_map(|p| {
                let comm = std::fs::read_to_string(format!("/proc/{}/cmdline", p.pid)).ok()?;
                let command = comm
                    .split('\0')
                    .filter(|a| !a.is_empty())
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ");
                (!command.is_empty()).then_some((p.pid, command.chars().take(200).collect()))
            })
            .collect();
    if !named.is_empty()
        && let Ok(json) = serde_json::to_vec(&named)
    {
        let _ = files::write_atomic(&stage_dir.join("processes.json"), &json);
    }
}
