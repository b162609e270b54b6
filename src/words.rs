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

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
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

/// `text` cut to at most `max` characters, with `…` where it was cut: at
/// the last space that keeps at least half, never inside a word, and
/// before a parenthesis the cut would leave open (a reason cut as
/// `memcheck (compute-sanitizer said: CUDA API Error: Duplicate entry ker…`
/// read as a sentence that stops mid-word inside its parentheses).
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let room: String = text.chars().take(max.saturating_sub(1)).collect();
    let half = room.len() / 2;
    let mut cut = match room.rfind(' ') {
        Some(at) if at >= half => at,
        _ => room.len(),
    };
    // The last parenthesis the kept part leaves open.
    let mut open: Vec<usize> = Vec::new();
    for (i, c) in room[..cut].char_indices() {
        match c {
            '(' => open.push(i),
            ')' => {
                open.pop();
            }
            _ => {}
        }
    }
    if let Some(&at) = open.first()
        && room[..at].trim_end().len() >= max / 3
    {
        cut = at;
    }
    let mut s = room[..cut]
        .trim_end_matches([' ', ',', ';', ':', '('])
        .to_string();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::{and_list, close, plural, shorten};

    #[test]
    fn a_list_reads_as_a_sentence() {
        assert_eq!(and_list(&["ncu"]), "ncu");
        assert_eq!(and_list(&["racecheck", "ncu"]), "racecheck and ncu");
        assert_eq!(
            and_list(&["racecheck", "synccheck", "ncu"]),
            "racecheck, synccheck and ncu"
        );
    }

    #[test]
    fn a_cut_keeps_whole_words_and_never_leaves_a_parenthesis_open() {
        let reason = "compute-sanitizer said: CUDA API Error: Duplicate entry kernels named \
                      \"_ZN17cutlass__5x_cudnn6KernelI\"";
        let cut = shorten(reason, 60);
        assert!(cut.chars().count() <= 60, "{cut}");
        assert!(cut.ends_with("Duplicate entry…"), "{cut}");
        let cut = shorten(
            "memcheck, racecheck (compute-sanitizer was not found on PATH, in $CUDA_HOME/bin)",
            50,
        );
        assert_eq!(cut, "memcheck, racecheck…");
        // A word longer than the room is cut where it must be.
        assert_eq!(shorten("abcdefghijklmnop", 6), "abcde…");
        assert_eq!(shorten("short", 60), "short");
    }

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
