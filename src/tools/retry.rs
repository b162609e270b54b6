//! A stage's tries as data: when a try ends, the stage's kind answers
//! whether it runs again, why, where the try is kept and whether its
//! findings stand (nextest's retries: the supervisor runs what the kind
//! answers, and records each try as an `EarlierTry`). The answers every
//! kind shares are here; a kind with more to say (the sanitizers: their
//! tool may die of a fault) adds its own in its `StageKind::retry`.

use std::path::Path;

use super::StageRecord;

/// A try that just ended, as the kind judges whether to run it again.
pub struct TryEnded<'a> {
    /// What the supervisor saw of it.
    pub record: &'a StageRecord,
    /// Its folder.
    pub stage_dir: &'a Path,
    /// The plain run's folder, when the run has one.
    pub plain_dir: Option<&'a Path>,
    /// The plain run exited 0.
    pub plain_ok: bool,
    /// It ran beside other stages (or beside the plain run).
    pub beside_others: bool,
}

/// The kind's answer: run the stage again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    /// Why, the start of the note the stage carries.
    pub reason: String,
    /// Where the try is kept in the run directory (`crowded`, `crashed`).
    pub folder: &'static str,
    /// Whether its findings stand with the stage's (a tool that died after
    /// printing them: yes; a try crowded out beside others: no).
    pub judged: bool,
}

/// The kinds' shared answer: crowded out, else (a sanitizer stage) its
/// tool died of a fault.
pub fn answer(end: &TryEnded<'_>) -> Option<Retry> {
    crowded(end).or_else(|| tool_crashed(end))
}

/// The answer every kind shares: a try that ran beside other stages and
/// ran out of GPU memory, could not listen on its port, or crashed before
/// the end of the work the plain run finished, runs again alone; what it
/// saw is not judged (it ran short of what the others took).
pub fn crowded(end: &TryEnded<'_>) -> Option<Retry> {
    if !end.beside_others {
        return None;
    }
    let tool = end.record.tool;
    let starved = super::starved::of_memory(tool, end.stage_dir, end.plain_dir)
        .or_else(|| super::starved::of_port(tool, end.stage_dir, end.plain_dir))
        .or_else(|| super::starved::crashed(tool, end.stage_dir, end.plain_dir, end.plain_ok))?;
    Some(Retry {
        reason: format!("{starved} beside other stages"),
        folder: "crowded",
        judged: false,
    })
}

/// The sanitizer stages' answer after the shared one: compute-sanitizer
/// itself died of a fault before its summary (`starved::tool_crashed`): run
/// once more alone, the records it printed before dying judged.
pub fn tool_crashed(end: &TryEnded<'_>) -> Option<Retry> {
    let why = super::starved::tool_crashed(end.record, end.stage_dir)?;
    Some(Retry {
        reason: why,
        folder: "crashed",
        judged: true,
    })
}
