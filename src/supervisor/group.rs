//! Signalling a child's whole process group. compute-sanitizer, ncu and
//! Python all start children of their own; signalling only the direct
//! child leaves them running.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

/// Set by [`adopt_orphans`]: only a subreaper's children outside its group
/// are orphans it adopted. A sweep, which runs several `cudawatch run`
/// children at once, each in its own group, is not one, so that one
/// finishing never kills its siblings.
static SUBREAPER: AtomicBool = AtomicBool::new(false);
/// The children cudawatch started and still supervises: with stages
/// running at once, one stage's end must not take
/// the others for orphans.
static SUPERVISED: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Starts a child and marks it as under supervision until [`released`],
/// in one step: [`kill_adopted`] holds the same lock, so a child just
/// started beside a stage that is ending is never taken for an orphan.
pub fn spawn_supervised<C>(
    spawn: impl FnOnce() -> std::io::Result<C>,
    pid_of: impl Fn(&C) -> Option<u32>,
) -> std::io::Result<C> {
    let mut list = SUPERVISED.lock().unwrap_or_else(|e| e.into_inner());
    let child = spawn()?;
    if let Some(pid) = pid_of(&child) {
        list.push(pid as i32);
    }
    Ok(child)
}

/// `pid` has exited and been reaped.
pub fn released(pid: u32) {
    if let Ok(mut list) = SUPERVISED.lock() {
        list.retain(|p| *p != pid as i32);
    }
}

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

/// Makes cudawatch the child subreaper of everything it starts: a process
/// that leaves its process group and session (`setsid sleep &`, a daemon)
/// is adopted by cudawatch, not by init, when its parent exits, so
/// [`kill_adopted`] can find it. Linux only; elsewhere nothing changes.
pub fn adopt_orphans() {
    if rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok() {
        SUBREAPER.store(true, Ordering::SeqCst);
    }
}

/// Kills and reaps every process cudawatch adopted: its children outside
/// its own process group (its own helpers, such as nvidia-smi, stay in
/// it). Returns how many there were. Killing one can orphan its own
/// children, who are adopted in turn, so this repeats until none is left.
pub fn kill_adopted() -> usize {
    if !SUBREAPER.load(Ordering::SeqCst) {
        return 0;
    }
    let me = rustix::process::getpid();
    let my_group = rustix::process::getpgrp();
    let mut killed = 0;
    for _ in 0..16 {
        // Held while the orphans are found and killed: no child starts
        // unlisted meanwhile.
        let live = SUPERVISED.lock().unwrap_or_else(|e| e.into_inner());
        let adopted: Vec<Pid> = children_of(me)
            .into_iter()
            .filter(|pid| !live.contains(&pid.as_raw_nonzero().get()))
            .filter(|pid| rustix::process::getpgid(Some(*pid)).is_ok_and(|g| g != my_group))
            .collect();
        if adopted.is_empty() {
            break;
        }
        for pid in adopted {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
            reap(pid);
            killed += 1;
        }
    }
    killed
}

/// Waits up to a second for a killed process to be gone; one stuck in the
/// kernel (a GPU driver call) is left as a zombie rather than hang the run.
fn reap(pid: Pid) {
    for _ in 0..50 {
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG) {
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            _ => return,
        }
    }
}

/// The processes whose parent is `parent`, from /proc.
fn children_of(parent: Pid) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(Pid::from_raw)
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

/// The parent of `pid`: the fourth field of /proc/PID/stat, after the
/// command name in parentheses (which may itself hold spaces or ')').
fn parent_of(pid: Pid) -> Option<Pid> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let ppid: i32 = after_name.split_whitespace().nth(1)?.parse().ok()?;
    Pid::from_raw(ppid)
}
