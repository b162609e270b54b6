//! Telling what a file is from its first bytes, so `cudawatch parse` takes
//! any mix of files in any order.

use crate::model::{InputKind, Tool};

/// How many leading bytes [`detect`] needs.
pub const HEAD_BYTES: usize = 16 * 1024;

/// The kind of a file, from its first [`HEAD_BYTES`] bytes.
pub fn detect(head: &[u8]) -> InputKind {
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('<') {
        return InputKind::SanitizerXml;
    }
    if crate::global_race::is_output(trimmed) {
        return InputKind::GlobalRace;
    }
    let first = trimmed.lines().next().unwrap_or("");
    // A page's header, first or (live `ncu --csv`) after ncu's `==PROF==`
    // lines and the program's own output.
    let header = trimmed
        .lines()
        .take(200)
        .find(|l| l.starts_with("\"ID\",\"Process ID\""));
    if let Some(header) = header {
        return if header.contains("\"Metric Name\"") {
            InputKind::NcuDetails
        } else {
            InputKind::NcuRaw
        };
    }
    if [
        "\"File Path\"",
        "\"Kernel Name\"",
        "\"Function Name\"",
        "\"Line No\"",
        "\"Address\",\"Source\"",
    ]
    .iter()
    .any(|p| first.starts_with(p))
    {
        return InputKind::NcuSource;
    }
    let lines = || trimmed.lines();
    if lines().take(400).any(|l| {
        let l = l.trim();
        l == "CPU Call Stack:" || l.starts_with("Python CPU Call Stack")
    }) {
        return InputKind::NcuStacks;
    }
    if lines().any(|l| tool_line(l) == Some(InputKind::SanitizerText)) {
        return InputKind::SanitizerText;
    }
    if lines().any(|l| tool_line(l) == Some(InputKind::NcuLog)) {
        return InputKind::NcuLog;
    }
    InputKind::ProgramOutput
}

/// Whether one line is compute-sanitizer's or ncu's console output. A log
/// whose head holds none is scanned on with this, line by line: a CI log's
/// sanitizer output may start long after its first 16 KiB.
pub fn tool_line(l: &str) -> Option<InputKind> {
    // compute-sanitizer's usage (options it rejected) is its output too,
    // and a CI log puts a timestamp or a test name before the tool's prefix.
    if l.starts_with("========= ")
        || l == "========="
        || l.contains(" ========= ")
        || l.ends_with(" =========")
        || l.contains("Usage: compute-sanitizer")
    {
        return Some(InputKind::SanitizerText);
    }
    if l.starts_with("==PROF==") || l.starts_with("==ERROR==") || l.starts_with("==WARNING==") {
        return Some(InputKind::NcuLog);
    }
    None
}

/// The tool a file name suggests (`memcheck.xml`, `run/racecheck.stdout`),
/// or the one its kind implies.
pub fn tool_hint(path: &str, kind: InputKind) -> Tool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    for tool in Tool::SANITIZERS {
        if name.contains(tool.name()) {
            return tool;
        }
    }
    match kind {
        InputKind::NcuRaw
        | InputKind::NcuDetails
        | InputKind::NcuSource
        | InputKind::NcuLog
        | InputKind::NcuStacks => Tool::Ncu,
        InputKind::ProgramOutput => Tool::Plain,
        InputKind::GlobalRace => Tool::GlobalRace,
        InputKind::SanitizerXml | InputKind::SanitizerText => Tool::Sanitizer,
    }
}
