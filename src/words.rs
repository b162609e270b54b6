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

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn one_is_singular_and_the_rest_plural() {
        assert_eq!(plural(1u64, "error"), "1 error");
        assert_eq!(plural(26u64, "error"), "26 errors");
        assert_eq!(plural(0u64, "launch"), "0 launches");
        assert_eq!(plural(3u64, "site"), "3 sites");
    }
}
