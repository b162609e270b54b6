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

/// The variables that decide colour under `auto`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ColorEnv<'a> {
    /// NO_COLOR.
    pub no_color: Option<&'a str>,
    /// CLICOLOR.
    pub clicolor: Option<&'a str>,
    /// CLICOLOR_FORCE.
    pub clicolor_force: Option<&'a str>,
    /// TERM.
    pub term: Option<&'a str>,
}

/// Whether to colour one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Resolves `--color` for a stream, with the conventions of
    /// <https://bixense.com/clicolors/> and <https://no-color.org>:
    /// `auto` colours a terminal unless NO_COLOR is set (non-empty),
    /// CLICOLOR is `0` or TERM is `dumb`; CLICOLOR_FORCE (non-zero) colours
    /// even a pipe. The environment is passed in so the rule can be tested.
    ///
    /// Not anstream/colorchoice: they adapt or strip ANSI per stream for
    /// programs that pass styled text through; cudawatch colours a few
    /// labels of its own and never passes a tool's escapes on
    /// (`render::untrusted`), so this rule is all it needs.
    pub fn resolve(choice: ColorChoice, is_terminal: bool, env: &ColorEnv<'_>) -> Style {
        let set = |v: Option<&str>| v.is_some_and(|v| !v.is_empty() && v != "0");
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if env.no_color.is_some_and(|v| !v.is_empty()) => false,
            ColorChoice::Auto if set(env.clicolor_force) => true,
            ColorChoice::Auto => {
                is_terminal && env.clicolor != Some("0") && env.term != Some("dumb")
            }
        };
        Style { color }
    }

    /// Resolves against this process's environment, for stderr and stdout.
    pub fn from_env(choice: ColorChoice) -> Styles {
        let var = |name| std::env::var(name).ok();
        let (no_color, clicolor, force, term) = (
            var("NO_COLOR"),
            var("CLICOLOR"),
            var("CLICOLOR_FORCE"),
            var("TERM"),
        );
        let env = ColorEnv {
            no_color: no_color.as_deref(),
            clicolor: clicolor.as_deref(),
            clicolor_force: force.as_deref(),
            term: term.as_deref(),
        };
        Styles {
            stderr: Style::resolve(choice, std::io::stderr().is_terminal(), &env),
            stdout: Style::resolve(choice, std::io::stdout().is_terminal(), &env),
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
    fn auto_colours_a_terminal_unless_no_color_clicolor_0_or_dumb() {
        let env = |no_color, clicolor, force, term| ColorEnv {
            no_color,
            clicolor,
            clicolor_force: force,
            term,
        };
        let auto = |t, e: ColorEnv<'_>| Style::resolve(ColorChoice::Auto, t, &e).color;
        assert!(auto(true, env(None, None, None, Some("xterm"))));
        assert!(!auto(true, env(Some("1"), None, None, Some("xterm"))));
        assert!(auto(true, env(Some(""), None, None, None)));
        assert!(!auto(true, env(None, None, None, Some("dumb"))));
        assert!(!auto(false, env(None, None, None, None)));
        assert!(!auto(true, env(None, Some("0"), None, None)));
        assert!(
            auto(false, env(None, None, Some("1"), None)),
            "CLICOLOR_FORCE colours a pipe"
        );
        assert!(
            !auto(false, env(Some("1"), None, Some("1"), None)),
            "NO_COLOR wins"
        );
        assert!(
            Style::resolve(
                ColorChoice::Always,
                false,
                &env(Some("1"), None, None, None)
            )
            .color
        );
        assert!(!Style::resolve(ColorChoice::Never, true, &ColorEnv::default()).color);
    }
}
