//! Live progress on stderr: an indicatif spinner per stage with elapsed time
//! on a terminal, plain `(n/N)` lines elsewhere (CI logs, pipes). Fed by the
//! run command as the stage loop's events arrive.

use std::io::IsTerminal;
use std::time::Duration;

use cudawatch_model::{Outcome, Tool};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// The progress display.
pub struct Progress {
    /// The spinners of the stages running now, by plan position; stages run
    /// at once after the plain run, each with its own line.
    bars: Vec<(usize, ProgressBar)>,
    multi: Option<MultiProgress>,
}

impl Progress {
    /// Spinners only on a terminal, outside CI, and when output is not
    /// being streamed live (which would tear them).
    pub fn new(streaming: bool) -> Progress {
        let is_ci = std::env::var_os("CI").is_some();
        let use_bars = std::io::stderr().is_terminal() && !is_ci && !streaming;
        Progress {
            bars: Vec::new(),
            multi: use_bars.then(MultiProgress::new),
        }
    }

    /// A line between the stages (how many run at once, and why).
    pub fn note(&mut self, text: &str) {
        self.line(&format!("note: {}", crate::render::untrusted::clean(text)));
    }

    /// A stage started (`index` from 0, of `total`).
    pub fn started(&mut self, index: usize, total: usize, tool: Tool, command: &str) {
        if let Some(multi) = &self.multi {
            let bar = multi.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("{spinner} ({prefix}) {msg} [{elapsed_precise}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(format!("{}/{total}", index + 1));
            bar.set_message(tool.name().to_string());
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bars.push((index, bar));
        } else {
            // The command holds the program's arguments: shown, never obeyed.
            crate::render::stderr::line(&format!(
                "({}/{total}) {}: {}",
                index + 1,
                tool.name(),
                crate::render::untrusted::clean(command)
            ));
        }
    }

    /// A running stage did something worth saying before it ends (a
    /// flood: it runs again without call stacks).
    pub fn noted(&mut self, index: usize, total: usize, tool: Tool, text: &str) {
        self.line(&format!(
            "({}/{total}) {}: {}",
            index + 1,
            tool.name(),
            crate::render::untrusted::clean(text)
        ));
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
        if let Some(at) = self.bars.iter().position(|(i, _)| *i == index) {
            let (_, bar) = self.bars.remove(at);
            bar.finish_and_clear();
            if let Some(multi) = &self.multi {
                multi.remove(&bar);
            }
        }
        self.line(&line);
    }

    /// A line above the spinners, or on stderr when there are none.
    fn line(&self, text: &str) {
        match &self.multi {
            Some(multi) if !self.bars.is_empty() => {
                let _ = multi.println(crate::render::stderr::fitted(text));
            }
            _ => crate::render::stderr::line(text),
        }
    }
}
