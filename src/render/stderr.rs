//! The one way cudawatch says something on stderr outside a report:
//! `warning: …`, `note: …`, `error: …`, wrapped at the terminal's width
//! (`render::text`), tool and file text neutralised, and a closed stderr
//! (`cudawatch run … 2>&1 | head -1`) never a panic: what is lost there is
//! in the run directory.

use std::io::Write as _;

/// Writes `text` (one or more lines, `\n` added) to stderr, fitted.
pub fn line(text: &str) {
    let width = super::width_of(&std::io::stderr());
    let mut fitted = super::text::fit(text, width);
    fitted.push('\n');
    let _ = std::io::stderr().lock().write_all(fitted.as_bytes());
}

/// `warning: {text}`, the text neutralised.
pub fn warning(text: &str) {
    line(&format!("warning: {}", super::untrusted::clean(text)));
}

/// `note: {text}`, the text neutralised.
pub fn note(text: &str) {
    line(&format!("note: {}", super::untrusted::clean(text)));
}

/// `error: {text}`, the text neutralised.
pub fn error(text: &str) {
    line(&format!("error: {}", super::untrusted::clean(text)));
}
