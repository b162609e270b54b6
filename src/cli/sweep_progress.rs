//! Progress of a whole sweep on stderr: one line that says how many
//! targets are done, running and failed, and the elapsed time, on a
//! terminal; a plain line per target start and end elsewhere (CI logs,
//! Slurm output files).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::render::untrusted::clean;
use crate::supervisor::pool::NotStartedWhy;
use crate::sweep::run::SweepEvent;

/// The sweep's progress display.
pub struct SweepProgress {
    bar: Option<ProgressBar>,
    use_bar: bool,
    total: usize,
    done: usize,
    running: usize,
    failed: usize,
}

impl SweepProgress {
    /// A bar only on a terminal and outside CI.
    pub fn new() -> SweepProgress {
        SweepProgress {
            bar: None,
            use_bar: std::io::stderr().is_terminal() && std::env::var_os("CI").is_none(),
            total: 0,
            done: 0,
            running: 0,
            failed: 0,
        }
    }

    /// Takes one event of the sweep.
    pub fn event(&mut self, event: SweepEvent<'_>) {
        match event {
            SweepEvent::Planned { total, done_before } => {
                self.total = total;
                self.done = done_before;
                if done_before > 0 {
                    self.line(format!(
                        "resuming: {done_before} of {total} targets finished earlier, not run again"
                    ));
                }
                if self.use_bar {
                    let bar = ProgressBar::new(total as u64);
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}]")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.enable_steady_tick(Duration::from_millis(200));
                    self.bar = Some(bar);
                }
            }
            SweepEvent::Started { name, attempt, gpu } => {
                self.running += 1;
                let again = if attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                };
                self.line(format!(
                    "start {}{again}{}",
                    clean(name),
                    gpu.map(|g| format!(" on GPU {}", clean(g)))
                        .unwrap_or_default()
                ));
            }
            SweepEvent::Finished {
                name,
                attempt,
                as_expected,
            } => {
                self.running = self.running.saturating_sub(1);
                self.done += 1;
                if !as_expected {
                    self.failed += 1;
                }
                let how = if attempt.by_budget {
                    "stopped by the budget (incomplete)".to_string()
                } else if attempt.timed_out {
                    "stopped at its timeout (incomplete)".to_string()
                } else if let Some(e) = &attempt.setup_error {
                    format!("could not start: {}", clean(e))
                } else {
                    match attempt.exit_code {
                        Some(code) => format!(
                            "exit {code}{}",
                            if as_expected { "" } else { ", not as expected" }
                        ),
                        None => "killed".to_string(),
                    }
                };
                self.line(format!(
                    "done  {} in {:.1}s: {how}",
                    clean(name),
                    attempt.seconds
                ));
            }
            SweepEvent::Changed { name, attempt } => {
                self.line(format!(
                    "again {}: its command or files changed since attempt {attempt} checked it, or its report did",
                    clean(name)
                ));
            }
            SweepEvent::NotStarted { name, why } => {
                let why = match why {
                    NotStartedWhy::Budget => "the budget is spent",
                    NotStartedWhy::Interrupted => "the sweep was stopped",
                };
                self.line(format!("skip  {}: {why}; a resume runs it", clean(name)));
            }
        }
        if let Some(bar) = &self.bar {
            bar.set_message(self.status());
        }
    }

    fn status(&self) -> String {
        format!(
            "{}/{} done, {} running, {} failed",
            self.done, self.total, self.running, self.failed
        )
    }

    /// A line above the bar, or on its own without one.
    fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => crate::render::stderr::line(&format!("[{}] {text}", self.status())),
        }
    }

    /// Clears the bar before the report.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
