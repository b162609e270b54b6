//! The one way cudawatch says something on stderr outside a report:
//! `warning: …`, `note: …`, `error: …`, wrapped at the terminal's width
//! (`render::text`), tool and file text neutralised, and a closed stderr
//! (`cudawatch run … 2>&1 | head -1`) never a panic: what is lost there is
//! in the run directory.

use std::io::Write as _;

/// Writes `text` (one or more lines, `\n` added) to stderr, fitted, each
/// line neutralised (ids and paths may come from someone else's report).
pub fn line(text: &str) {
    let mut fitted = fitted(text);
    fitted.push('\n');
    let _ = std::io::stderr().lock().write_all(fitted.as_bytes());
}

/// `text` neutralised and wrapped at words to stderr's width, without its
/// last line break: for a line printed above live spinners, which the
/// terminal would otherwise break mid-word.
pub fn fitted(text: &str) -> String {
    let width = super::width_of(&std::io::stderr());
    let mut fitted = super::text::fit(&neutralised(text), width);
    if fitted.ends_with('\n') {
        fitted.pop();
    }
    fitted
}

/// `warning: {text}`, on one line whatever `text` holds.
pub fn warning(text: &str) {
    line(&format!("warning: {}", super::untrusted::clean(text)));
}

/// `note: {text}`, on one line whatever `text` holds.
pub fn note(text: &str) {
    line(&format!("note: {}", super::untrusted::clean(text)));
}

/// `error: {text}`, on one line whatever `text` holds.
pub fn error(text: &str) {
    line(&format!("error: {}", super::untrusted::clean(text)));
}

/// `text` with each of its lines neutralised, the line breaks kept.
fn neutralised(text: &str) -> String {
    text.lines()
        .map(super::untrusted::clean)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_from_someone_elses_report_reaches_stderr_without_its_escapes() {
        let text = "added a rule for leak-\x1b[2J\x1b]0;owned\x07 to rules.toml\nsecond line";
        let shown = super::neutralised(text);
        assert!(
            !shown.contains('\x1b') && !shown.contains('\x07'),
            "{shown:?}"
        );
        assert_eq!(shown.lines().count(), 2);
    }
}
