//! One child process, from spawn to the last byte of its output.
//!
//! A single `select!` loop drains stdout and stderr (so a full pipe can
//! never stall the child), waits for it, watches the deadline and the
//! signals. On timeout the group gets SIGTERM, then SIGKILL after the grace
//! period. After the child exits, anything left in its process group (a
//! grandchild that kept running) is killed and reported.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use cudawatch_model::ProcessEnd;
use rustix::process::Signal;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::group::{group_alive, kill_adopted, signal_group};
use super::repeats::{RepeatCounter, RepeatWatch};
use super::signals::{Shutdown, Signals};

/// How long to wait for the pipes to close after the child exits before
/// deciding a grandchild holds them.
const PIPE_CLOSE_WAIT: Duration = Duration::from_millis(500);

/// What to run and where its output goes.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    /// Command line.
    pub argv: Vec<OsString>,
    /// Variables to set.
    pub env: Vec<(String, String)>,
    /// Variables to remove.
    pub env_remove: Vec<String>,
    /// Where stdout and stderr go.
    pub output: Output,
    /// Stop the child after this long.
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Copy output live to our stderr as well.
    pub stream: bool,
    /// Working directory, when not ours.
    pub cwd: Option<PathBuf>,
    /// Orders given while it runs: a new time limit, or stop (a stage
    /// started beside the plain run, before its limit or its place was
    /// known; `supervisor::head_start`).
    pub steer: Option<tokio::sync::watch::Receiver<Steer>>,
    /// Stop the child once its stdout has said `marker` more than `limit`
    /// times (a sanitizer flooding records; `supervisor::stage`).
    pub flood: Option<FloodWatch>,
    /// Stop the child once its sanitizer records only repeat themselves
    /// (a loop under kernel-level recovery; `supervisor::repeats`).
    pub repeats: Option<RepeatWatch>,
}

/// A limit on how many times a child's stdout may say one thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloodWatch {
    /// What is counted: it must not overlap itself.
    pub marker: &'static [u8],
    /// How many are allowed.
    pub limit: u64,
}

/// Counts a [`FloodWatch`]'s marker in a stream that arrives in chunks.
struct FloodCounter {
    watch: FloodWatch,
    seen: u64,
    /// The end of the last chunk, where a marker may have begun.
    carry: Vec<u8>,
}

impl FloodCounter {
    fn new(watch: FloodWatch) -> FloodCounter {
        FloodCounter {
            watch,
            seen: 0,
            carry: Vec::new(),
        }
    }

    /// Counts `chunk`; true once the limit is passed.
    fn passed(&mut self, chunk: &[u8]) -> bool {
        let marker = self.watch.marker;
        if marker.is_empty() {
            return false;
        }
        self.carry.extend_from_slice(chunk);
        self.seen += self
            .carry
            .windows(marker.len())
            .filter(|w| *w == marker)
            .count() as u64;
        let keep = self.carry.len().min(marker.len() - 1);
        self.carry.drain(..self.carry.len() - keep);
        self.seen > self.watch.limit
    }
}

/// An order to a running child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steer {
    /// Stop it at this long after its start (now, if that has passed).
    Limit(Duration),
    /// Stop it (SIGTERM, the grace, SIGKILL): its run is not wanted.
    Cancel,
}

/// Where a child's output goes.
#[derive(Debug, Clone)]
pub enum Output {
    /// Into these files, whole: a stage's or a sweep target's artifacts.
    Files {
        /// File for stdout.
        stdout: PathBuf,
        /// File for stderr.
        stderr: PathBuf,
    },
    /// Into memory, at most this many bytes per stream (the rest is
    /// drained and dropped, so a chatty probe can neither stall on a full
    /// pipe nor fill memory): a probe's or nvidia-smi's answer.
    Capture {
        /// Bytes kept per stream.
        cap: usize,
    },
}

/// How a supervised child ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildEnd {
    /// Its exit status.
    pub end: ProcessEnd,
    /// Wall time.
    pub seconds: f64,
    /// The deadline passed and cudawatch stopped it.
    pub timed_out: bool,
    /// A signal from the user stopped it.
    pub interrupted: bool,
    /// It ignored SIGTERM and was killed.
    pub killed: bool,
    /// Something of its process group outlived it and was killed.
    pub left_behind: bool,
    /// It could not be started.
    pub spawn_error: Option<String>,
    /// Output could not be written.
    pub write_error: Option<String>,
    /// Under [`Output::Capture`]: stdout and stderr, each cut at the cap.
    pub captured: (Vec<u8>, Vec<u8>),
    /// Under [`Output::Capture`]: some output went past the cap.
    pub output_cut: bool,
    /// A [`Steer::Cancel`] stopped it.
    pub cancelled: bool,
    /// Its [`FloodWatch`] stopped it.
    pub flooded: bool,
    /// Its [`RepeatWatch`] stopped it.
    pub repeating: bool,
}

impl ChildEnd {
    /// A child that was never started, and why.
    pub fn not_started(error: String) -> ChildEnd {
        ChildEnd {
            end: ProcessEnd::NotStarted,
            seconds: 0.0,
            timed_out: false,
            interrupted: false,
            killed: false,
            left_behind: false,
            spawn_error: Some(error),
            write_error: None,
            captured: (Vec::new(), Vec::new()),
            output_cut: false,
            cancelled: false,
            flooded: false,
            repeating: false,
        }
    }
}

/// A sink for one output stream: its file or its buffer, and our stderr
/// when streaming.
struct Sink {
    to: SinkTo,
    stream: bool,
    error: Option<String>,
    cut: bool,
}

enum SinkTo {
    File(File),
    Memory { kept: Vec<u8>, cap: usize },
}

impl Sink {
    fn new(to: SinkTo, stream: bool) -> Sink {
        Sink {
            to,
            stream,
            error: None,
            cut: false,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        match &mut self.to {
            SinkTo::File(file) => {
                if let Err(e) = file.write_all(bytes) {
                    self.error.get_or_insert(e.to_string());
                }
            }
            SinkTo::Memory { kept, cap } => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
                self.cut |= bytes.len() > room;
            }
        }
        if self.stream {
            let _ = std::io::stderr().write_all(bytes);
        }
    }

    fn kept(self) -> Vec<u8> {
        match self.to {
            SinkTo::Memory { kept, .. } => kept,
            SinkTo::File(_) => Vec::new(),
        }
    }
}

/// Runs one child to completion under `spec`'s rules.
// Over 100 lines on purpose: one select! loop per child, as nextest has it: its
// arms share the child's state (output, deadline, signals).
pub async fn supervise(
    spec: &ChildSpec,
    signals: &mut Signals,
    on_spawn: impl FnOnce(u32),
) -> ChildEnd {
    let Some((program, args)) = spec.argv.split_first() else {
        return ChildEnd::not_started("empty command".into());
    };
    let open = |path: &PathBuf| {
        crate::safe_files::create(path)
            .map(SinkTo::File)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))
    };
    let (out_to, err_to) = match &spec.output {
        Output::Files { stdout, stderr } => match (open(stdout), open(stderr)) {
            (Ok(o), Ok(e)) => (o, e),
            (Err(e), _) | (_, Err(e)) => return ChildEnd::not_started(e),
        },
        Output::Capture { cap } => (
            SinkTo::Memory {
                kept: Vec::new(),
                cap: *cap,
            },
            SinkTo::Memory {
                kept: Vec::new(),
                cap: *cap,
            },
        ),
    };
    let mut out_sink = Sink::new(out_to, spec.stream);
    let mut err_sink = Sink::new(err_to, spec.stream);
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (k, v) in &spec.env {
        command.env(k, v);
    }
    for k in &spec.env_remove {
        command.env_remove(k);
    }
    if let Some(dir) = &spec.cwd {
        command.current_dir(dir);
    }
    die_with_cudawatch(&mut command);
    let started = Instant::now();
    let mut child = match super::group::spawn_supervised(|| command.spawn(), |c| c.id()) {
        Ok(child) => child,
        Err(e) => {
            return ChildEnd::not_started(format!(
                "cannot start {}: {e}",
                program.to_string_lossy()
            ));
        }
    };
    let pgid = child.id().unwrap_or(0);
    on_spawn(pgid);
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut out_buf = vec![0u8; 64 * 1024];
    let mut err_buf = vec![0u8; 64 * 1024];
    let mut deadline = tokio::time::Instant::from_std(started + spec.timeout);
    let mut steer = spec.steer.clone();
    let mut kill_at: Option<tokio::time::Instant> = None;
    let mut result = ChildEnd {
        end: ProcessEnd::NotStarted,
        seconds: 0.0,
        timed_out: false,
        interrupted: false,
        killed: false,
        left_behind: false,
        spawn_error: None,
        write_error: None,
        captured: (Vec::new(), Vec::new()),
        output_cut: false,
        cancelled: false,
        flooded: false,
        repeating: false,
    };
    let mut flood = spec.flood.map(FloodCounter::new);
    let mut repeats = spec.repeats.map(|w| RepeatCounter::new(w, started));
    // One loop for the whole life of the child: output is drained, the exit
    // awaited, the deadline and the signals watched, all at once. After the
    // exit the loop keeps draining until both pipes close, or until
    // PIPE_CLOSE_WAIT shows that something else (a grandchild) holds them.
    let mut exited: Option<ProcessEnd> = None;
    let mut pipes_close_by: Option<tokio::time::Instant> = None;
    while exited.is_none() || stdout.is_some() || stderr.is_some() {
        let running = exited.is_none();
        tokio::select! {
            n = read_some(&mut stdout, &mut out_buf), if stdout.is_some() => match n {
                Some(n) => {
                    out_sink.write(&out_buf[..n]);
                    let stopping = result.flooded || result.repeating;
                    if running && !stopping {
                        let chunk = &out_buf[..n];
                        result.flooded = flood.as_mut().is_some_and(|f| f.passed(chunk));
                        result.repeating = !result.flooded
                            && repeats
                                .as_mut()
                                .is_some_and(|r| r.looping(chunk, std::time::Instant::now()));
                    }
                    if !stopping && (result.flooded || result.repeating) {
                        signal_group(pgid, Signal::TERM);
                        kill_at.get_or_insert(tokio::time::Instant::now() + spec.grace);
                    }
                }
                None => stdout = None,
            },
            n = read_some(&mut stderr, &mut err_buf), if stderr.is_some() => match n {
                Some(n) => err_sink.write(&err_buf[..n]),
                None => stderr = None,
            },
            status = child.wait(), if running => {
                exited = Some(status.map_or(ProcessEnd::NotStarted, process_end));
                pipes_close_by = Some(tokio::time::Instant::now() + PIPE_CLOSE_WAIT);
            }
            _ = tokio::time::sleep_until(deadline), if running && kill_at.is_none() => {
                result.timed_out = true;
                signal_group(pgid, Signal::TERM);
                kill_at = Some(tokio::time::Instant::now() + spec.grace);
            }
            _ = sleep_until_opt(kill_at), if running => {
                result.killed = true;
                signal_group(pgid, Signal::KILL);
                kill_at = Some(tokio::time::Instant::now() + Duration::from_secs(3600));
            }
            number = signals.recv(), if running => {
                result.interrupted = true;
                if signals.shutdown() >= Shutdown::Now {
                    result.killed = true;
                    signal_group(pgid, Signal::KILL);
                } else {
                    // Forward what the user sent; the grace period then applies.
                    if let Some(sig) = Signal::from_named_raw(number) {
                        signal_group(pgid, sig);
                    }
                    kill_at.get_or_insert(tokio::time::Instant::now() + spec.grace);
                }
            }
            order = next_order(&mut steer), if running && steer.is_some() => match order {
                Some(Steer::Limit(limit)) => {
                    deadline = tokio::time::Instant::from_std(started + limit);
                }
                Some(Steer::Cancel) => {
                    result.cancelled = true;
                    // A cancel caused by the user's own signal (the plain run
                    // it stopped ended first) leaves that signal to the
                    // signals arm, ready in this same loop: the stage gets
                    // the SIGINT the user sent, not a SIGTERM (select! picks
                    // among ready arms at random).
                    if signals.shutdown() == Shutdown::None {
                        signal_group(pgid, Signal::TERM);
                    }
                    kill_at.get_or_insert(tokio::time::Instant::now() + spec.grace);
                }
                // Whoever steered it is gone: it runs under its last order.
                None => steer = None,
            },
            _ = sleep_until_opt(pipes_close_by) => break,
        }
    }
    result.end = exited.unwrap_or(ProcessEnd::NotStarted);
    super::group::released(pgid);
    if group_alive(pgid) {
        result.left_behind = true;
        signal_group(pgid, Signal::KILL);
    }
    // What left the group and the session (a daemon) was adopted by
    // cudawatch when its parent exited: it goes too. Not after a capture:
    // nvidia-smi sampled during a stage must not reap that stage's orphans.
    if matches!(spec.output, Output::Files { .. }) && kill_adopted() > 0 {
        result.left_behind = true;
    }
    result.seconds = started.elapsed().as_secs_f64();
    result.output_cut = out_sink.cut || err_sink.cut;
    result.write_error = out_sink.error.take().or(err_sink.error.take());
    result.captured = (out_sink.kept(), err_sink.kept());
    result
}

async fn read_some<R: tokio::io::AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> Option<usize> {
    let reader = pipe.as_mut()?;
    match reader.read(buf).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

/// The next order, or `None` once nobody can give one.
async fn next_order(steer: &mut Option<tokio::sync::watch::Receiver<Steer>>) -> Option<Steer> {
    let receiver = steer.as_mut()?;
    receiver.changed().await.ok()?;
    Some(*receiver.borrow_and_update())
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The exit status as data: a code, or a signal number.
pub fn process_end(status: std::process::ExitStatus) -> ProcessEnd {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ProcessEnd::Exited(code),
        (None, Some(sig)) => ProcessEnd::Signaled(sig),
        (None, None) => ProcessEnd::NotStarted,
    }
}

/// The child gets SIGKILL when cudawatch dies, however it dies: a
/// SIGKILLed `cudawatch run` (the OOM killer, a CI runner's cancel) must not
/// leave an hour-long sanitizer stage running on the GPU. Checked again
/// after the call: if cudawatch died before it, the child ends itself.
fn die_with_cudawatch(command: &mut Command) {
    let parent = rustix::process::getpid();
    // SAFETY: between fork and exec only async-signal-safe system calls
    // (prctl, getppid, kill) are made, and nothing is allocated.
    unsafe {
        command.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            if rustix::process::getppid() != Some(parent) {
                let _ = rustix::process::kill_process(
                    rustix::process::getpid(),
                    rustix::process::Signal::KILL,
                );
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_split_between_two_chunks_is_counted_once() {
        let mut counter = FloodCounter::new(FloodWatch {
            marker: b"\n========= \n",
            limit: 2,
        });
        assert!(!counter.passed(b"========= COMPUTE-SANITIZER\n========= a\n========= \n"));
        assert!(!counter.passed(b"========= b\n====="));
        assert_eq!(counter.seen, 1);
        assert!(!counter.passed(b"==== \n"));
        assert_eq!(counter.seen, 2, "the marker across the chunks");
        assert!(counter.passed(b"========= c\n========= \n"));
    }
}
