//! Processes of this machine as /proc shows them: a process's executable
//! name, owner, environment and ancestry. Used to tell the program's own
//! processes (and their ranks) from others on its GPUs, and to name those
//! others without quoting their command lines.

/// A process's executable name (`comm`, at most 15 bytes, as `ps` shows
/// it); empty when it is gone.
pub fn executable_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim_end().chars().filter(|c| !c.is_control()).collect())
        .unwrap_or_default()
}

/// The user id that owns a process, when it can be read.
pub fn owner_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A process's environment (only a process of the stage's own tree is
/// read: ours to read, and where the launcher wrote `RANK`).
pub fn read_environ(pid: u32) -> Vec<(String, String)> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|bytes| {
            bytes
                .split(|b| *b == 0)
                .filter_map(|entry| {
                    let text = String::from_utf8_lossy(entry);
                    let (k, v) = text.split_once('=')?;
                    Some((k.to_string(), v.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `ancestor` is `pid`'s parent, its parent's parent, ... (a
/// process orphaned to cudawatch, the subreaper, is no longer counted).
pub fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut current = pid;
    // A bounded walk: /proc can change under us, never loop on it.
    for _ in 0..64 {
        match parent_of(current) {
            Some(parent) if parent == ancestor => return true,
            Some(parent) if parent > 1 && parent != current => current = parent,
            _ => return false,
        }
    }
    false
}

/// The parent pid from `/proc/PID/stat` (after the command name's last
/// `)`, which may itself hold spaces and parentheses).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}
