//! Words shared by every part that writes sentences for people.

/// `1 site`, `2 sites`; `noun` is the singular.
pub fn plural(n: impl Into<u64>, noun: &str) -> String {
    match n.into() {
        1 => format!("1 {noun}"),
        n if noun.ends_with('s') || noun.ends_with("sh") || noun.ends_with("ch") => {
            format!("{n} {noun}es")
        }
        n => format!("{n} {noun}s"),
    }
}

/// Whether `typed` is one slip from `word`: at most two letters added,
/// dropped or changed (Levenshtein), for "did you mean" hints.
pub fn close(word: &str, typed: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (word.chars().collect(), typed.chars().collect());
    if a.len().abs_diff(b.len()) > 2 {
        return false;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let next = (row[j] + 1).min(row[j + 1] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()] <= 2
}

/// `text` cut to `max` characters, with `…` where it was cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::{close, plural};

    #[test]
    fn a_slip_is_close_and_another_word_is_not() {
        assert!(close("timeout", "timout"));
        assert!(close("fail-on", "fial-on"));
        assert!(!close("timeout", "stages"));
        assert!(!close("grace", "colour-scheme"));
    }

    #[test]
    fn one_is_singular_and_the_rest_plural() {
        assert_eq!(plural(1u64, "error"), "1 error");
        assert_eq!(plural(26u64, "error"), "26 errors");
        assert_eq!(plural(0u64, "launch"), "0 launches");
        assert_eq!(plural(3u64, "site"), "3 sites");
    }
}
