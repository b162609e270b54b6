//! ncu's own console lines (`==PROF==`, `==WARNING==`, `==ERROR==`): whether
//! anything was profiled at all, and why not. ncu exits 0 when no kernel
//! matched, so these lines are the only sign.

use crate::model::ToolSummary;

/// Reads ncu's console output.
pub fn parse(input: &[u8]) -> ToolSummary {
    let text = String::from_utf8_lossy(input);
    let mut summary = ToolSummary::default();
    let mut profiled = 0;
    for line in text.lines() {
        if line.starts_with("==PROF== Profiling ") {
            profiled += 1;
        } else if line.contains("No kernels were profiled") {
            summary.no_kernels_profiled = true;
        } else if line.contains("The application returned an error code") {
            // The program's own failure, not the profiler's.
            summary.target_failed = true;
        } else if line.starts_with("==ERROR==") {
            summary
                .failures
                .push(line.trim_start_matches("==ERROR==").trim().to_string());
        } else if line.contains("Failed to initialize the profiler") {
            summary.failures.push(line.trim().to_string());
        }
    }
    summary.kernels_profiled = Some(profiled);
    summary
}
