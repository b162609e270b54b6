//! The one text layer of every terminal output: prose wrapped at the
//! terminal's width with hanging indents, and tables whose columns are
//! sized by their content. Both break lines only between words, after a
//! comma and after a path or namespace separator, never inside an
//! identifier or a `file:line`; a table that cannot be read at the width
//! becomes a list. Pure: the width comes from the caller
//! (`render::width_of`), `None` meaning a file or a pipe, never wrapped.

use std::fmt::Write as _;

use tabled::builder::Builder;
use tabled::settings::Style as TableStyle;
use unicode_width::UnicodeWidthChar;

/// Columns `text` takes on a terminal: its display width, ANSI colour
/// sequences (ours, `render::style`) taking none.
pub fn width(text: &str) -> usize {
    let mut n = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI ... final byte in @..~
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) && c != '[' {
                    break;
                }
            }
        } else {
            n += c.width().unwrap_or(0);
        }
    }
    n
}

/// `text` wrapped to `width` columns: the first line starts with `first`,
/// the others with `rest` (a hanging indent); each line ends with `\n`.
/// Lines already in `text` are kept. Unlimited width: one line per line.
pub fn wrap(text: &str, width: Option<usize>, first: &str, rest: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let lead = if i == 0 { first } else { rest };
        match width {
            None => {
                let _ = writeln!(out, "{lead}{line}");
            }
            Some(width) => {
                for (j, piece) in wrap_line(line, width, self::width(lead), self::width(rest))
                    .iter()
                    .enumerate()
                {
                    let _ = writeln!(out, "{}{piece}", if j == 0 { lead } else { rest });
                }
            }
        }
    }
    if text.is_empty() {
        out.push_str(first.trim_end());
        out.push('\n');
    }
    out
}

/// A block of lines fitted to `width`: each line wider than it is
/// wrapped, its continuation indented under the line's text (past its
/// indentation and a `- `, `N. ` or `[N] ` marker). Lines that fit, tables
/// among them, are left as they are. The last step of every human output.
pub fn fit(block: &str, width: Option<usize>) -> String {
    let Some(columns) = width else {
        return block.to_string();
    };
    let mut out = String::with_capacity(block.len());
    for line in block.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        if self::width(body) <= columns {
            out.push_str(line);
            continue;
        }
        let indent = &body[..body.len() - body.trim_start_matches(' ').len()];
        let hang = " ".repeat(hanging_indent(body));
        let wrapped = wrap(&body[indent.len()..], width, indent, &hang);
        out.push_str(if line.ends_with('\n') {
            &wrapped
        } else {
            wrapped.trim_end_matches('\n')
        });
    }
    out
}

/// Where a wrapped line's continuation starts: under the text after the
/// line's indentation and its list marker; two columns in otherwise.
fn hanging_indent(line: &str) -> usize {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let marker = if rest.starts_with("- ") || rest.starts_with("* ") {
        2
    } else if let Some(end) = rest.find("] ").filter(|_| rest.starts_with('[')) {
        end + 2
    } else if let Some(end) = rest
        .find(". ")
        .filter(|&e| e > 0 && rest[..e].bytes().all(|b| b.is_ascii_digit()))
    {
        end + 2
    } else {
        2
    };
    (indent + marker).min(24)
}

/// One line's pieces: the first fits in `width - first`, the others in
/// `width - rest`. A word too long for a line is broken at its last
/// separator that fits, and only where it has none at all, at the width.
fn wrap_line(line: &str, width: usize, first: usize, rest: usize) -> Vec<String> {
    let room = |n: usize| {
        width
            .saturating_sub(if n == 0 { first } else { rest })
            .max(1)
    };
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in line.split(' ') {
        let used = self::width(&current);
        let sep = usize::from(!current.is_empty());
        if used + sep + self::width(word) <= room(pieces.len()) {
            if sep == 1 {
                current.push(' ');
            }
            current.push_str(word);
            continue;
        }
        // The word goes to the next line, broken where it must be.
        if !current.is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        let mut word = word;
        while self::width(word) > room(pieces.len()) {
            let at = break_point(word, room(pieces.len()));
            pieces.push(word[..at].to_string());
            word = &word[at..];
        }
        current.push_str(word);
    }
    pieces.push(current);
    pieces
}

/// Where to break a word that is wider than `room`: after its last comma,
/// `/` or `::` that leaves a first part within `room`, else at `room`.
fn break_point(word: &str, room: usize) -> usize {
    let mut best = None;
    let mut used = 0;
    let mut prev = None;
    for (i, c) in word.char_indices() {
        used += c.width().unwrap_or(0);
        if used > room {
            break;
        }
        let end = i + c.len_utf8();
        if breaks_after(c, prev) {
            best = Some(end);
        }
        prev = Some(c);
    }
    best.filter(|&b| b < word.len()).unwrap_or_else(|| {
        // No separator: at the width (a hash or an address; the terminal
        // would break it there anyway).
        let mut used = 0;
        word.char_indices()
            .find(|(_, c)| {
                used += c.width().unwrap_or(0);
                used > room
            })
            .map_or(word.len(), |(i, c)| {
                // A first character wider than the room (a CJK character
                // with one column left) goes whole: never half a character.
                if i == 0 { c.len_utf8() } else { i }
            })
    })
}

/// Whether a long word may break after `c` (`prev` before it): a comma,
/// a semicolon, a path separator, or the second colon of `::`.
fn breaks_after(c: char, prev: Option<char>) -> bool {
    matches!(c, ',' | '/' | ';') || (c == ':' && prev == Some(':'))
}

/// The widest piece of `cell` that must stay on one line: a word of up
/// to [`WHOLE`] columns (a path, a `file:line`, an identifier) whole,
/// a longer one split after its commas and path separators.
fn unbreakable(cell: &str) -> usize {
    cell.lines()
        .flat_map(|l| l.split(' '))
        .map(|word| {
            if width(word) <= WHOLE {
                return width(word);
            }
            let mut widest = 0;
            let mut start = 0;
            let mut prev = None;
            for (i, c) in word.char_indices() {
                if breaks_after(c, prev) {
                    widest = widest.max(width(&word[start..i + c.len_utf8()]));
                    start = i + c.len_utf8();
                }
                prev = Some(c);
            }
            widest.max(width(&word[start..]))
        })
        .max()
        .unwrap_or(0)
}

/// Words up to this wide are never broken in a table cell.
const WHOLE: usize = 32;

/// A table: a header and rows of cells, rendered as a boxed table whose
/// columns are as wide as their content allows, or as a list where the
/// columns' unbreakable words do not fit side by side.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// Columns a boxed table spends on borders and padding beside its cells.
fn frame(columns: usize) -> usize {
    3 * columns + 1
}

impl Table {
    /// A table with these column names.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (as many cells as the header has names).
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The columns' widths at `width`: each as wide as its content where
    /// all fit, else each at least its widest unbreakable word and the
    /// room left given to the columns that lack the most; `None` when
    /// even the unbreakable words do not fit side by side.
    fn widths(&self, width: Option<usize>) -> Option<Vec<usize>> {
        let columns = self.header.len();
        let cells = || std::iter::once(&self.header).chain(&self.rows);
        let desired: Vec<usize> = (0..columns)
            .map(|i| {
                cells()
                    .filter_map(|r| r.get(i))
                    .flat_map(|c| c.lines())
                    .map(self::width)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let Some(width) = width else {
            return Some(desired);
        };
        let room = width.checked_sub(frame(columns))?;
        if desired.iter().sum::<usize>() <= room {
            return Some(desired);
        }
        let least: Vec<usize> = (0..columns)
            .map(|i| {
                cells()
                    .filter_map(|r| r.get(i))
                    .map(|c| unbreakable(c))
                    .max()
                    .unwrap_or(0)
                    .min(desired[i])
            })
            .collect();
        if least.iter().sum::<usize>() > room {
            return None;
        }
        // Water-filling: every column gets its content up to a common cap
        // (never less than its unbreakable words), the largest cap that
        // fits; what is left goes one column at a time to those still
        // short. Narrow columns stay whole, wide ones share the rest.
        let at = |cap: usize| -> Vec<usize> {
            (0..columns)
                .map(|i| desired[i].min(cap).max(least[i]))
                .collect()
        };
        let (mut low, mut high) = (0, desired.iter().copied().max().unwrap_or(0));
        while low < high {
            let mid = (low + high).div_ceil(2);
            if at(mid).iter().sum::<usize>() <= room {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        let mut widths = at(low);
        let mut left = room - widths.iter().sum::<usize>();
        for i in 0..columns {
            if left == 0 {
                break;
            }
            if widths[i] < desired[i] {
                widths[i] += 1;
                left -= 1;
            }
        }
        Some(widths)
    }

    /// The table fitted to `width` (unlimited when `None`), or the list
    /// layout where it cannot be fitted.
    pub fn render(&self, width: Option<usize>) -> String {
        match self.widths(width) {
            Some(widths) => self.boxed(&widths),
            None => self.list(width),
        }
    }

    fn boxed(&self, widths: &[usize]) -> String {
        let mut b = Builder::default();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            b.push_record(row.iter().enumerate().map(|(i, cell)| {
                let w = widths.get(i).copied().unwrap_or(usize::MAX);
                let wrapped = wrap(cell, Some(w.max(1)), "", "");
                wrapped.trim_end_matches('\n').to_string()
            }));
        }
        let mut table = b.build();
        table.with(TableStyle::sharp());
        let mut s = table.to_string();
        s.push('\n');
        s
    }

    /// One block per row: its first cell, then `name: value` for the others.
    fn list(&self, width: Option<usize>) -> String {
        let mut out = String::new();
        for row in &self.rows {
            let mut cells = row.iter().zip(&self.header);
            if let Some((title, _)) = cells.next() {
                out.push_str(&wrap(title, width, "  ", "    "));
            }
            for (cell, name) in cells {
                if cell.is_empty() || cell == "-" {
                    continue;
                }
                let lead = format!("      {name}: ");
                let rest = " ".repeat(8);
                out.push_str(&wrap(&cell.replace('\n', " "), width, &lead, &rest));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(text: &str) -> usize {
        text.lines().map(width).max().unwrap_or(0)
    }

    #[test]
    fn prose_wraps_between_words_with_a_hanging_indent() {
        let text = "Invalid __global__ write of size 4 bytes is out of bounds: 1 bytes after the 4000-byte allocation at 0x7fa90a800000";
        let wrapped = wrap(text, Some(40), "  - ", "    ");
        assert!(widest(&wrapped) <= 40, "{wrapped}");
        assert!(
            wrapped.contains("4000-byte"),
            "a word is never split: {wrapped}"
        );
        assert!(wrapped.lines().skip(1).all(|l| l.starts_with("    ")));
        assert_eq!(
            wrapped.split_whitespace().collect::<Vec<_>>().join(" "),
            format!("- {text}"),
            "nothing lost"
        );
    }

    #[test]
    fn a_long_path_breaks_after_a_separator_and_nothing_is_wrapped_without_a_width() {
        let text = "see /home/someone/projects/model/kernels/attention_forward_kernel.cu:120";
        let wrapped = wrap(text, Some(40), "", "  ");
        assert!(widest(&wrapped) <= 40, "{wrapped}");
        assert!(
            wrapped.contains("attention_forward_kernel.cu:120"),
            "{wrapped}"
        );
        assert_eq!(wrap(text, None, "", ""), format!("{text}\n"));
    }

    #[test]
    fn a_block_is_fitted_line_by_line_under_its_markers() {
        let block = "short line\n  - problem GPUs visible: no GPU: nvidia-smi is not on PATH: no NVIDIA driver here\n";
        let fitted = fit(block, Some(40));
        assert!(widest(&fitted) <= 40, "{fitted}");
        assert!(fitted.starts_with("short line\n  - problem"), "{fitted}");
        assert!(
            fitted.lines().skip(2).all(|l| l.starts_with("    ")),
            "{fitted}"
        );
        assert_eq!(fit(block, None), block);
    }

    #[test]
    fn colour_sequences_take_no_columns() {
        assert_eq!(width("\x1b[1;31m[1]\x1b[0m ok"), 6);
        assert_eq!(width("µs…"), 3);
    }

    #[test]
    fn a_table_sizes_columns_by_content_and_never_splits_an_identifier() {
        let mut t = Table::new(["kernel", "where", "why"]);
        t.row([
            "oob_write",
            "…/gpu/coalescing.cu:12",
            "racecheck ran to the end and found nothing at all in this program",
        ]);
        let s = t.render(Some(60));
        assert!(widest(&s) <= 60, "{s}");
        assert!(
            s.contains("oob_write") && s.contains("…/gpu/coalescing.cu:12"),
            "{s}"
        );
        assert!(
            s.contains("racecheck ran to") && s.contains("this program"),
            "prose wraps between words: {s}"
        );
        let unlimited = t.render(None);
        assert_eq!(
            unlimited.lines().count(),
            5,
            "one line per row: {unlimited}"
        );
    }

    #[test]
    fn a_table_that_cannot_fit_becomes_a_list() {
        let mut t = Table::new(["stage", "outcome", "why"]);
        t.row([
            "racecheck",
            "inconclusive",
            "compute-sanitizer_was_not_found_anywhere",
        ]);
        let s = t.render(Some(40));
        assert!(!s.contains('│'), "{s}");
        assert!(
            s.contains("racecheck") && s.contains("outcome: inconclusive"),
            "{s}"
        );
        assert!(widest(&s) <= 40, "{s}");
    }

    #[test]
    fn a_wide_character_where_one_column_is_left_is_never_cut_in_half() {
        // A report whose stage reason began with spaces and then '界'
        // panicked here (a char boundary inside it), exit 101.
        for width in 1..8 {
            for text in [
                "      界界界",
                "  界",
                "界",
                "a界b界c界d",
                "        界 界 界",
            ] {
                let wrapped = wrap(text, Some(width), "", "      ");
                assert!(wrapped.contains('界'), "{width}: {wrapped:?}");
                let _ = fit(&format!("{text}\n"), Some(width));
            }
        }
    }
}
