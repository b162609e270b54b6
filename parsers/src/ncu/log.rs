//! ncu's own console lines (`==PROF==`, `==WARNING==`, `==ERROR==`): whether
//! anything was profiled at all, and why not. ncu exits 0 when no kernel
//! matched, so these lines are the only sign.

use crate::model::ToolSummary;

/// Reads ncu's console output.
pub fn parse(input: &[u8]) -> ToolSummary {
    let text = String::from_utf8_lossy(input);
    let mut summary = ToolSummary::default();
    let mut profiled = 0;
    let mut listing = false;
    for line in text.lines() {
        // After "No kernels were profiled", ncu lists the kernels it saw
        // launched ("Available Kernels:" then "1. name"): proof they exist.
        if listing {
            if let Some((n, name)) = line.split_once(". ")
                && n.trim().parse::<u32>().is_ok()
            {
                summary.available_kernels.push(name.trim().to_string());
                continue;
            }
            listing = false;
        }
        if line.trim() == "Available Kernels:" {
            listing = true;
        } else if let Some(rest) = line.strip_prefix("==PROF== Profiling ") {
            profiled += 1;
            let name = rest.strip_prefix('"').and_then(|r| r.split_once('"'));
            if let Some((name, _)) = name
                && !summary.profiled_kernels.iter().any(|k| k == name)
            {
                summary.profiled_kernels.push(name.to_string());
            }
        } else if line.starts_with("==PROF== Connected to process") {
            summary.attached = true;
        } else if line.contains("No kernels were profiled") {
            summary.no_kernels_profiled = true;
        } else if line.contains("The application returned an error code") {
            // The program's own failure, not the profiler's.
            summary.target_failed = true;
        } else if line.starts_with("==ERROR==") {
            let error = line.trim_start_matches("==ERROR==").trim();
            // A heading ncu continues on the next error line ("An error
            // was reported by the counter measurement library:", then
            // "LaunchFailed"): one failure, heading and cause.
            match summary.failures.last_mut() {
                Some(heading) if heading.ends_with(':') => {
                    heading.push(' ');
                    heading.push_str(error);
                }
                _ => summary.failures.push(error.to_string()),
            }
        } else if line.contains("Failed to initialize the profiler") {
            summary.failures.push(line.trim().to_string());
        }
    }
    summary.kernels_profiled = Some(profiled);
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_and_its_cause_on_the_next_error_line_are_one_failure() {
        // sample-reports/beyond/ncu_counters_beside/ncu/stdout (H200).
        let summary = parse(include_bytes!(
            "../../../sample-reports/beyond/ncu_counters_beside/ncu/stdout"
        ));
        assert_eq!(
            summary.failures[0],
            "An error was reported by the counter measurement library: LaunchFailed"
        );
        assert_eq!(summary.failures.len(), 1, "{:?}", summary.failures);
        assert!(summary.target_failed);
        let two = parse(b"==ERROR== Failed to profile \"k\"\n==ERROR== LaunchFailed\n");
        assert_eq!(two.failures, ["Failed to profile \"k\"", "LaunchFailed"]);
    }
}
