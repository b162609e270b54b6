//! Running a probe command with a time limit and its output captured:
//! doctor's commands are short and run one at a time, outside the
//! supervisor's loop; a hung `nvidia-smi` (a GPU in a bad state) must not
//! hang doctor.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a command printed and how it ended.
#[derive(Debug, Clone)]
pub struct Ran {
    /// Exit code; `None` when killed by a signal or the time limit.
    pub code: Option<i32>,
    /// stdout and stderr together, as text.
    pub output: String,
    /// Stopped at the time limit.
    pub timed_out: bool,
}

/// Runs `program args` for at most `limit`; `None` when it cannot start.
pub fn run<S: AsRef<OsStr>>(
    program: &Path,
    args: &[S],
    env: &[(&str, &str)],
    limit: Duration,
) -> Option<Ran> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().ok()?;
    let (mut out, mut err) = (child.stdout.take()?, child.stderr.take()?);
    let out_thread = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err_thread = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > limit => {
                timed_out = true;
                if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                }
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    let mut output = String::from_utf8_lossy(&out_thread.join().unwrap_or_default()).into_owned();
    output.push_str(&String::from_utf8_lossy(
        &err_thread.join().unwrap_or_default(),
    ));
    Some(Ran {
        code: status.and_then(|s| s.code()),
        output,
        timed_out,
    })
}

/// The last non-empty line of a command's output: what it died saying.
pub fn last_line(output: &str) -> &str {
    output
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map_or("no output", str::trim)
}

/// `name` on PATH.
pub fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
