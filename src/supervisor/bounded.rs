//! A short command whose answer cudawatch reads (doctor's probes and
//! version queries, nvidia-smi's GPU list and memory), run by the same
//! child loop as the stages: its own process group, a time limit with
//! SIGTERM, grace and SIGKILL, and its output captured up to a cap. A hung
//! nvidia-smi (a GPU in a bad state) is stopped at its limit and said so,
//! and stalls neither a run nor a sweep.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::time::Duration;

use cudawatch_model::ProcessEnd;

use super::child::{ChildSpec, Output, supervise};
use super::signals::Signals;

/// Bytes kept of each output stream.
const CAP: usize = 4 << 20;
/// Between SIGTERM and SIGKILL for a command past its limit.
const GRACE: Duration = Duration::from_millis(500);

/// `limit`, or less when `CUDAWATCH_QUERY_TIMEOUT` (seconds) says so: the
/// one knob over every short command's limit (a machine whose nvidia-smi
/// is known to be slow, a test with a hanging fake).
pub fn limit(default: Duration) -> Duration {
    std::env::var("CUDAWATCH_QUERY_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .map_or(default, |d| d.min(default))
}

/// What a command printed and how it ended.
#[derive(Debug, Clone)]
pub struct Ran {
    /// Exit code; `None` when killed by a signal or the time limit.
    pub code: Option<i32>,
    /// stdout, then stderr, as text (each cut at the cap).
    pub output: String,
    /// stdout alone.
    pub stdout: String,
    /// Stopped at the time limit.
    pub timed_out: bool,
    /// Stopped by the user's Ctrl-C or a SIGTERM ([`capture_interruptible`]).
    pub interrupted: bool,
}

impl Ran {
    /// Exited 0 within its limit.
    pub fn succeeded(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

/// Runs `program args` (with `env` added) for at most `limit`; `None` when
/// it cannot start. Callable from any thread outside an async runtime.
pub fn capture<S: AsRef<OsStr>>(
    program: &Path,
    args: &[S],
    env: &[(&str, &str)],
    limit: Duration,
) -> Option<Ran> {
    // Signals are not watched here: a Ctrl-C during doctor ends cudawatch
    // as usual, and the probe with it (it dies with its parent); during a
    // run, the stage loop acts on the signal.
    run(program, args, env, limit, false)
}

/// As [`capture`], for a command a run waits on before its stages for
/// seconds to minutes (building the global-race tool): a Ctrl-C or SIGTERM
/// is forwarded to it, and counted, so the stage loop then starts nothing
/// and writes the report of a run interrupted before its stages.
pub fn capture_interruptible<S: AsRef<OsStr>>(
    program: &Path,
    args: &[S],
    env: &[(&str, &str)],
    limit: Duration,
) -> Option<Ran> {
    run(program, args, env, limit, true)
}

fn run<S: AsRef<OsStr>>(
    program: &Path,
    args: &[S],
    env: &[(&str, &str)],
    limit: Duration,
    watch_signals: bool,
) -> Option<Ran> {
    let mut argv: Vec<OsString> = vec![program.as_os_str().to_owned()];
    argv.extend(args.iter().map(|a| a.as_ref().to_owned()));
    let spec = ChildSpec {
        argv,
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        env_remove: Vec::new(),
        output: Output::Capture { cap: CAP },
        timeout: limit,
        grace: GRACE,
        stream: false,
        cwd: None,
        steer: None,
        flood: None,
        repeats: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let end = runtime.block_on(async {
        // Inside the runtime: tokio's signal streams need its reactor.
        let mut signals = if watch_signals {
            Signals::install()
        } else {
            Signals::unwatched()
        };
        supervise(&spec, &mut signals, |_| {}).await
    });
    if end.end == ProcessEnd::NotStarted {
        return None;
    }
    let (stdout, stderr) = end.captured;
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    let mut output = stdout.clone();
    output.push_str(&String::from_utf8_lossy(&stderr));
    Some(Ran {
        code: match end.end {
            ProcessEnd::Exited(code) if !end.timed_out => Some(code),
            _ => None,
        },
        output,
        stdout,
        timed_out: end.timed_out,
        interrupted: end.interrupted,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_past_its_limit_is_stopped_and_said_so() {
        let started = std::time::Instant::now();
        let ran = capture(
            Path::new("/bin/sh"),
            &["-c", "sleep 30 & echo $!; wait"],
            &[],
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(ran.timed_out);
        assert_eq!(ran.code, None);
        assert!(started.elapsed() < Duration::from_secs(10));
        // The whole group went, the shell's background sleep included.
        let sleeper = ran.stdout.trim();
        assert!(!sleeper.is_empty());
        let alive = || {
            std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
                .is_ok_and(|stat| !stat.contains(") Z "))
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while alive() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!alive(), "sleep {sleeper} outlived its group");
    }

    #[test]
    fn output_past_the_cap_is_dropped_not_kept() {
        let ran = capture(
            Path::new("/bin/sh"),
            &["-c", "head -c 9000000 /dev/zero; echo done >&2"],
            &[],
            Duration::from_secs(20),
        )
        .unwrap();
        assert!(ran.succeeded());
        assert_eq!(ran.stdout.len(), CAP);
        assert!(ran.output.ends_with("done\n"));
    }

    #[test]
    fn a_program_that_is_not_there_does_not_start() {
        assert!(
            capture(
                Path::new("/nonexistent/x"),
                &[] as &[&str],
                &[],
                Duration::from_secs(1)
            )
            .is_none()
        );
    }
}
