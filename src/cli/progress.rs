//! Live progress on stderr: an indicatif spinner per stage with elapsed time
//! on a terminal, plain `(n/N)` lines elsewhere (CI logs, pipes). Consumes
//! the runner's events and nothing else.

use std::io::IsTerminal;
use std::time::Duration;

use cudawatch_model::{Outcome, Tool};
use indicatif::{ProgressBar, ProgressStyle};

/// What the runner tells the progress display.
pub enum Event<'a> {
    /// A stage began.
    Started {
        index: usize,
        total: usize,
        tool: Tool,
        command: &'a str,
    },
    /// A stage ended.
    Finished {
        index: usize,
        total: usize,
        tool: Tool,
        outcome: Outcome,
        seconds: f64,
    },
}

/// The progress display.
pub struct Progress {
    bar: Option<ProgressBar>,
    use_bar: bool,
}

impl Progress {
    /// A bar only on a terminal, outside CI, and when output is not being
    /// streamed live (which would tear it).
    pub fn new(streaming: bool) -> Progress {
        let is_ci = std::env::var_os("CI").is_some();
        Progress {
            bar: None,
            use_bar: std::io::stderr().is_terminal() && !is_ci && !streaming,
        }
    }

    /// Shows one event.
    pub fn on(&mut self, event: Event<'_>) {
        match event {
            Event::Started {
                index,
                total,
                tool,
                command,
            } => {
                if self.use_bar {
                    let bar = ProgressBar::new_spinner();
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{spinner} ({prefix}) {msg} [{elapsed_precise}]",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.set_prefix(format!("{}/{total}", index + 1));
                    bar.set_message(tool.name().to_string());
                    bar.enable_steady_tick(Duration::from_millis(200));
                    self.bar = Some(bar);
                } else {
                    eprintln!("({}/{total}) {}: {command}", index + 1, tool.name());
                }
            }
            Event::Finished {
                index,
                total,
                tool,
                outcome,
                seconds,
            } => {
                let line = format!(
                    "({}/{total}) {} {} in {seconds:.1}s",
                    index + 1,
                    tool.name(),
                    outcome.name()
                );
                match self.bar.take() {
                    Some(bar) => bar.finish_with_message(format!(
                        "{} {} in {seconds:.1}s",
                        tool.name(),
                        outcome.name()
                    )),
                    None => eprintln!("{line}"),
                }
            }
        }
    }
}
