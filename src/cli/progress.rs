//! Live progress on stderr: an indicatif spinner per stage with elapsed time
//! on a terminal, plain `(n/N)` lines elsewhere (CI logs, pipes). Fed by the
//! run command as the stage loop's events arrive.

use std::io::IsTerminal;
use std::time::Duration;

use cudawatch_model::{Outcome, Tool};
use indicatif::{ProgressBar, ProgressStyle};

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

    /// A stage started (`index` from 0, of `total`).
    pub fn started(&mut self, index: usize, total: usize, tool: Tool, command: &str) {
        if self.use_bar {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} ({prefix}) {msg} [{elapsed_precise}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(format!("{}/{total}", index + 1));
            bar.set_message(tool.name().to_string());
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        } else {
            // The command holds the program's arguments: shown, never obeyed.
            eprintln!(
                "({}/{total}) {}: {}",
                index + 1,
                tool.name(),
                crate::render::untrusted::clean(command)
            );
        }
    }

    /// A stage finished with `outcome` after `seconds`.
    pub fn finished(
        &mut self,
        index: usize,
        total: usize,
        tool: Tool,
        outcome: Outcome,
        seconds: f64,
    ) {
        let line = format!(
            "({}/{total}) {} {} in {seconds:.1}s",
            index + 1,
            tool.name(),
            outcome.name()
        );
        // The spinner gives way to a plain line: a finished bar left on
        // the terminal would share its line with whatever comes next.
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        eprintln!("{line}");
    }
}
