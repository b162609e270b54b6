//! Colour policy and the few ANSI styles the tables use.

use std::io::IsTerminal;

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Whether to colour each stream, decided once: human output goes to
/// stderr during a run and to stdout from `report` and `parse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Styles {
    /// For stderr.
    pub stderr: Style,
    /// For stdout.
    pub stdout: Style,
}

/// Whether to colour one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Resolves `--color` for a stream. `auto` colours only a terminal,
    /// and never when NO_COLOR is set to anything non-empty or TERM is
    /// `dumb`. The environment is passed in so the rule can be tested.
    pub fn resolve(
        choice: ColorChoice,
        is_terminal: bool,
        no_color: Option<&str>,
        term: Option<&str>,
    ) -> Style {
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb")
            }
        };
        Style { color }
    }

    /// Resolves against this process's environment, for stderr and stdout.
    pub fn from_env(choice: ColorChoice) -> Styles {
        let no_color = std::env::var("NO_COLOR").ok();
        let term = std::env::var("TERM").ok();
        let on =
            |is_terminal| Style::resolve(choice, is_terminal, no_color.as_deref(), term.as_deref());
        Styles {
            stderr: on(std::io::stderr().is_terminal()),
            stdout: on(std::io::stdout().is_terminal()),
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Red bold.
    pub fn bad(self, text: &str) -> String {
        self.paint("1;31", text)
    }

    /// Yellow.
    pub fn warn(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Green.
    pub fn good(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Bold.
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    /// Dim.
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_colours_a_terminal_unless_no_color_or_dumb() {
        assert!(Style::resolve(ColorChoice::Auto, true, None, Some("xterm")).color);
        assert!(!Style::resolve(ColorChoice::Auto, true, Some("1"), Some("xterm")).color);
        assert!(Style::resolve(ColorChoice::Auto, true, Some(""), None).color);
        assert!(!Style::resolve(ColorChoice::Auto, true, None, Some("dumb")).color);
        assert!(!Style::resolve(ColorChoice::Auto, false, None, None).color);
        assert!(Style::resolve(ColorChoice::Always, false, Some("1"), None).color);
        assert!(!Style::resolve(ColorChoice::Never, true, None, None).color);
    }
}
