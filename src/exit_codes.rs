//! cudawatch's exit codes, in one place. CI gates read these, so they are
//! stable: a new condition gets a new number, an old number never changes
//! meaning.
//!
//! When several conditions hold, the worst wins, in this order:
//! interrupted > setup error > inconclusive > findings > clean
//! (see [`worst`]). An inconclusive stage outranks findings on purpose: a
//! run that could not check everything must not look like a run that
//! merely found something.

/// Every stage ran and found nothing at or above `--fail-on`.
pub const CLEAN: i32 = 0;
/// Findings at or above `--fail-on`, or the program failed on its own.
pub const FINDINGS: i32 = 1;
/// Bad command line (clap's own code).
pub const USAGE: i32 = 2;
/// A stage could not really check the program: tool missing or broken, no
/// CUDA initialisation, timeout, truncated output, no kernels profiled.
pub const INCONCLUSIVE: i32 = 3;
/// cudawatch could not start: unreadable input, bad run directory, no
/// program given, cannot write the run directory.
pub const SETUP_ERROR: i32 = 4;
/// Writing a report to its destination failed.
pub const WRITE_ERROR: i32 = 5;
/// Stopped by Ctrl-C or SIGTERM (128 + SIGINT, the shell convention).
pub const INTERRUPTED: i32 = 130;

/// How bad an exit code is, for [`worst`].
fn rank(code: i32) -> u8 {
    match code {
        CLEAN => 0,
        FINDINGS => 1,
        INCONCLUSIVE => 2,
        WRITE_ERROR => 3,
        SETUP_ERROR | USAGE => 4,
        INTERRUPTED => 5,
        _ => 3,
    }
}

/// The worse of two exit codes.
pub fn worst(a: i32, b: i32) -> i32 {
    if rank(b) > rank(a) { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inconclusive_outranks_findings_and_interruption_outranks_all() {
        assert_eq!(worst(FINDINGS, INCONCLUSIVE), INCONCLUSIVE);
        assert_eq!(worst(INCONCLUSIVE, FINDINGS), INCONCLUSIVE);
        assert_eq!(worst(SETUP_ERROR, INTERRUPTED), INTERRUPTED);
        assert_eq!(worst(CLEAN, FINDINGS), FINDINGS);
    }
}
