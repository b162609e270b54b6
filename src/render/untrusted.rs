//! Text that came from tool output, captures or reports from others never
//! reaches a terminal as control: escape sequences (`ESC[2J`, `ESC]0;title`),
//! carriage returns and newlines that would forge a `CLEAN:` line above the
//! real verdict, and bidirectional overrides are shown as visible marks.
//! cudawatch's own colours are added after this, by `style`.

use cudawatch_model::{Judgement, Report};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// `text` with every control character made visible: a newline as `⏎`, a
/// tab as a space, anything else (and every invisible or line-breaking
/// character) as `�`.
pub fn clean(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\r' => '⏎',
            '\t' => ' ',
            c if is_hidden(c) => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// What a terminal must not be given as it is: controls, and characters a
/// reader cannot see or that break lines: all of Unicode's format class
/// (zero-width spaces and joiners, bidirectional overrides and isolates,
/// U+061C, U+180E) and its line and paragraph separators (U+2028, U+2029),
/// by category rather than a list, and the Hangul fillers, letters that
/// draw nothing (`oob\u{3164}_write` looks like `oob_write`).
fn is_hidden(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    c.is_control()
        || matches!(
            c.general_category(),
            GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
        || matches!(c, '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}')
}

/// A copy of the report and its judgement with every string cleaned: the
/// whole model is walked, so a field added later is covered too.
pub fn neutralise(report: &Report, judgement: &Judgement) -> (Report, Judgement) {
    (walk(report), walk(judgement))
}

/// A copy of any serialisable model value with every string cleaned.
pub fn walk<T: Serialize + DeserializeOwned + Clone>(value: &T) -> T {
    let Ok(mut json) = serde_json::to_value(value) else {
        return value.clone();
    };
    clean_value(&mut json);
    serde_json::from_value(json).unwrap_or_else(|_| value.clone())
}

/// Longest text shown from a tool: a 64 MB message would bury the report.
const MAX_CHARS: usize = 4096;

fn clean_value(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) if s.len() > MAX_CHARS => {
            let cut: String = s.chars().take(MAX_CHARS).collect();
            *s = format!(
                "{}… ({} more bytes in the JSON report)",
                clean(&cut),
                s.len() - cut.len()
            );
        }
        serde_json::Value::String(s) if s.chars().any(is_hidden) => {
            *s = clean(s);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(clean_value),
        serde_json::Value::Object(map) => map.values_mut().for_each(clean_value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_newlines_and_overrides_become_visible_marks() {
        assert_eq!(clean("a\x1b[2Jb"), "a\u{FFFD}[2Jb");
        assert_eq!(clean("t\x1b]0;title\x07"), "t\u{FFFD}]0;title\u{FFFD}");
        assert_eq!(
            clean("k\nCLEAN: no errors found"),
            "k⏎CLEAN: no errors found"
        );
        assert_eq!(clean("a\u{202E}b"), "a\u{FFFD}b");
        assert_eq!(clean("plain ünïcode"), "plain ünïcode");
    }

    #[test]
    fn invisible_and_line_breaking_characters_become_visible_marks() {
        for hidden in [
            '\u{200B}', '\u{2028}', '\u{2029}', '\u{061C}', '\u{180E}', '\u{115F}', '\u{3164}',
            '\u{FEFF}', '\u{2060}',
        ] {
            let text = format!("oob{hidden}_write");
            assert_eq!(clean(&text), "oob\u{FFFD}_write", "U+{:04X}", hidden as u32);
        }
        // Letters, marks and spaces a reader sees stay.
        assert_eq!(clean("naïve café ü 日本 a b"), "naïve café ü 日本 a b");
    }

    #[test]
    fn a_huge_message_is_cut_for_the_terminal() {
        let mut value = serde_json::json!({ "message": "x".repeat(64 << 20) });
        clean_value(&mut value);
        let shown = value["message"].as_str().unwrap();
        assert!(shown.len() < 5000 && shown.ends_with("more bytes in the JSON report)"));
    }
}
