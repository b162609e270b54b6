//! Signalling a child's whole process group. compute-sanitizer, ncu and
//! Python all start children of their own; signalling only the direct
//! child leaves them running.

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

/// Sends `signal` to process group `pgid`. A group that is already gone is
/// not an error.
pub fn signal_group(pgid: u32, signal: Signal) {
    if let Some(pid) = Pid::from_raw(pgid as i32) {
        let _ = kill_process_group(pid, signal);
    }
}

/// Whether any process of group `pgid` is still alive.
pub fn group_alive(pgid: u32) -> bool {
    Pid::from_raw(pgid as i32).is_some_and(|pid| test_kill_process_group(pid).is_ok())
}
