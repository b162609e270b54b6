//! From what a user types or pastes to explanations: a number, a code's
//! name, a finding kind, or any text (a message, a whole traceback), in
//! which every code name and every library string is looked for.

use std::collections::HashMap;

use serde::Serialize;

use crate::advice;
use crate::enums::{self, Library, Table};

/// Every table, the libraries' strings, ready for queries.
pub struct Knowledge {
    /// The header tables.
    pub tables: Vec<Table>,
    strings: HashMap<(Library, i64), String>,
}

/// One code explained.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// Its name (or the finding kind's id).
    pub name: String,
    /// Its library.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<Library>,
    /// Its value in the current (CUDA 13) numbering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<i64>,
    /// What the library itself prints for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The header's comment on it (or what the finding kind means).
    pub meaning: String,
    /// The process must restart: every later CUDA call fails the same way.
    pub sticky: bool,
    /// The same error in the other API (runtime ↔ driver).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub twin: Option<String>,
    /// Usual causes.
    pub causes: Vec<String>,
    /// The cudawatch stage that finds the root cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// What to run next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// Its anchor in docs/errors.md (`cudawatch explain --all`); a link
    /// needs the documentation base the caller knows (`crate::link`).
    pub anchor: String,
}

/// The answer to one query.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// How the query was read: `number`, `name`, `kind`, `text`.
    pub read_as: String,
    /// What it matched, most relevant first.
    pub explanations: Vec<Explanation>,
    /// What else to know (the old numbering, PyTorch's asynchronous errors).
    pub notes: Vec<String>,
}

impl Knowledge {
    /// The snapshot compiled into cudawatch.
    pub fn load() -> Knowledge {
        Knowledge::from(crate::ENUMS, crate::STRINGS)
    }

    /// From a header snapshot and a strings table.
    pub fn from(enums_text: &str, strings_tsv: &str) -> Knowledge {
        Knowledge {
            tables: enums::parse(enums_text),
            strings: crate::strings::parse(strings_tsv),
        }
    }

    fn codes(&self) -> impl Iterator<Item = (Library, &enums::Code)> {
        self.tables
            .iter()
            .flat_map(|t| t.codes.iter().map(move |c| (t.library, c)))
    }

    /// The name `explain` knows nearest to `query` (a code's or a finding
    /// kind's), when one is a few letters off: `cudaErrorIllegalAdress` →
    /// `cudaErrorIllegalAddress`. `None` when none is that near.
    pub fn nearest_name(&self, query: &str) -> Option<String> {
        let q = query.trim().to_ascii_lowercase();
        if q.is_empty() || q.contains(char::is_whitespace) {
            return None;
        }
        let names = self
            .codes()
            .map(|(_, c)| c.name.as_str())
            .chain(crate::advice::kinds().iter().map(|k| k.kind));
        let (distance, name) = names
            .map(|name| (edit_distance(&q, &name.to_ascii_lowercase()), name))
            .min_by_key(|(d, _)| *d)?;
        // A third of the query's letters, at most three: near enough to be a
        // slip, not another name.
        (distance > 0 && distance <= (q.len() / 3).clamp(1, 3)).then(|| name.to_string())
    }

    /// Whether an error of this value leaves the context broken: the
    /// runtime's or the driver's header says the process must be
    /// terminated and relaunched.
    pub fn sticky(&self, library: Library, value: i64) -> bool {
        matches!(library, Library::Runtime | Library::Driver)
            && self.codes().any(|(l, c)| {
                matches!(l, Library::Runtime | Library::Driver)
                    && c.value == value
                    && c.doc.contains("terminated and relaunched")
            })
    }

    /// The explanation of one code.
    pub fn explain_code(&self, library: Library, code: &enums::Code) -> Explanation {
        let twin = match library {
            Library::Runtime => self.find_in(Library::Driver, code.value),
            Library::Driver => self.find_in(Library::Runtime, code.value),
            _ => None,
        };
        let advice =
            advice::for_code(&code.name).or_else(|| twin.and_then(|t| advice::for_code(&t.name)));
        let meaning = if code.doc.is_empty() {
            twin.map(|t| t.doc.clone()).unwrap_or_default()
        } else {
            code.doc.clone()
        };
        Explanation {
            name: code.name.clone(),
            library: Some(library),
            value: Some(code.value),
            message: self.strings.get(&(library, code.value)).cloned(),
            meaning,
            sticky: self.sticky(library, code.value),
            twin: twin.map(|t| t.name.clone()),
            causes: advice
                .map(|a| a.causes.iter().map(|c| c.to_string()).collect())
                .unwrap_or_default(),
            stage: advice.map(|a| a.stage.to_string()),
            next: advice.map(|a| a.next.to_string()),
            anchor: crate::anchor(&code.name),
        }
    }

    fn find_in(&self, library: Library, value: i64) -> Option<&enums::Code> {
        self.tables
            .iter()
            .filter(|t| t.library == library)
            .flat_map(|t| t.codes.iter())
            .find(|c| c.value == value)
    }

    /// The explanation of a finding kind.
    pub fn explain_kind(kind: &str) -> Option<Explanation> {
        let k = advice::for_kind(kind)?;
        Some(Explanation {
            name: k.kind.to_string(),
            library: None,
            value: None,
            message: None,
            meaning: k.meaning.to_string(),
            sticky: false,
            twin: None,
            causes: k.advice.causes.iter().map(|c| c.to_string()).collect(),
            stage: Some(k.advice.stage.to_string()),
            next: Some(k.advice.next.to_string()),
            anchor: crate::anchor(k.kind),
        })
    }

    /// The explanation a report's finding links to: its error code when
    /// it names a known one, else its kind.
    pub fn topic_of(&self, kind: &str, error: Option<&str>) -> String {
        error
            .filter(|e| self.codes().any(|(_, c)| c.name == *e))
            .map_or_else(|| kind.to_string(), str::to_string)
    }

    /// Answers a query.
    pub fn explain(&self, query: &str) -> Answer {
        let q = query.trim();
        if let Some(value) = parse_number(q) {
            return self.by_number(value);
        }
        if !q.contains(char::is_whitespace) {
            let found: Vec<Explanation> = self
                .codes()
                .filter(|(_, c)| c.name.eq_ignore_ascii_case(q))
                .map(|(l, c)| self.explain_code(l, c))
                .collect();
            if !found.is_empty() {
                return Answer {
                    read_as: "name".into(),
                    explanations: found,
                    notes: Vec::new(),
                };
            }
            if let Some(k) = Knowledge::explain_kind(&q.to_ascii_lowercase()) {
                return Answer {
                    read_as: "kind".into(),
                    explanations: vec![k],
                    notes: Vec::new(),
                };
            }
        }
        self.by_text(q)
    }

    fn by_number(&self, value: i64) -> Answer {
        let mut explanations: Vec<Explanation> = Vec::new();
        // Runtime first, then the driver's twin, then the libraries.
        let mut found: Vec<(Library, &enums::Code)> =
            self.codes().filter(|(_, c)| c.value == value).collect();
        found.sort_by_key(|(l, _)| *l);
        for (library, code) in found {
            if library == Library::Driver
                && explanations
                    .iter()
                    .any(|e| e.twin.as_deref() == Some(&code.name))
            {
                continue;
            }
            explanations.push(self.explain_code(library, code));
        }
        let mut notes = Vec::new();
        if explanations.is_empty() {
            notes.push(format!(
                "no code of the CUDA 13 runtime, driver or libraries is {value}"
            ));
        }
        if let Some(old) = crate::legacy::name(value) {
            let now = explanations
                .iter()
                .find(|e| e.library == Some(Library::Runtime))
                .map(|e| e.name.as_str());
            if now != Some(old) {
                let current = self
                    .codes()
                    .find(|(l, c)| *l == Library::Runtime && c.name == old)
                    .map(|(_, c)| c.value);
                notes.push(format!(
                    "before CUDA 10.1 the runtime's {value} was {old}{}: a log from an older CUDA means that",
                    current.map_or(String::new(), |v| format!(" (now {v})"))
                ));
                if let Some((l, c)) = self
                    .codes()
                    .find(|(l, c)| *l == Library::Runtime && c.name == old)
                {
                    explanations.push(self.explain_code(l, c));
                }
            }
        }
        Answer {
            read_as: "number".into(),
            explanations,
            notes,
        }
    }

    /// Every code named in the text, and every library string it holds
    /// (longest first, so "an illegal memory access was encountered" wins
    /// over a shorter string inside it), in the order they appear.
    fn by_text(&self, text: &str) -> Answer {
        let lower = text.to_ascii_lowercase();
        let mut hits: Vec<(usize, Library, &enums::Code)> = Vec::new();
        for (library, code) in self.codes() {
            if let Some(at) = find_token(text, &code.name) {
                hits.push((at, library, code));
            }
        }
        let mut strings: Vec<(&(Library, i64), &String)> =
            self.strings.iter().filter(|(_, s)| s.len() >= 12).collect();
        strings.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        let mut covered: Vec<(usize, usize)> = Vec::new();
        for ((library, value), s) in strings {
            let needle = s.to_ascii_lowercase();
            if let Some(at) = lower.find(&needle) {
                if covered.iter().any(|(a, b)| at >= *a && at < *b) {
                    continue;
                }
                covered.push((at, at + needle.len()));
                if let Some(code) = self
                    .tables
                    .iter()
                    .filter(|t| t.library == *library)
                    .flat_map(|t| t.codes.iter())
                    .find(|c| c.value == *value)
                {
                    hits.push((at, *library, code));
                }
            }
        }
        // PyTorch's own words for running out of memory.
        if let Some(at) = lower.find("cuda out of memory")
            && let Some(code) = self.find_in(Library::Runtime, 2)
        {
            hits.push((at, Library::Runtime, code));
        }
        hits.sort_by_key(|(at, library, _)| (*at, *library));
        let mut explanations: Vec<Explanation> = Vec::new();
        for (_, library, code) in hits {
            let duplicate = explanations
                .iter()
                .any(|e| e.name == code.name || e.twin.as_deref() == Some(&code.name));
            if !duplicate {
                explanations.push(self.explain_code(library, code));
            }
        }
        let mut notes = Vec::new();
        if lower.contains("asynchronously reported") || lower.contains("cuda_launch_blocking") {
            notes.push("the traceback's line is where the error was noticed, not where it happened: kernels run asynchronously; cudawatch's plain stage runs with CUDA_LAUNCH_BLOCKING=1 and memcheck names the faulting line".into());
        }
        if explanations.iter().any(|e| e.sticky) {
            notes.push("a sticky error: every CUDA call after it fails the same way until the process restarts, so later errors in the log follow from the first".into());
        }
        Answer {
            read_as: "text".into(),
            explanations,
            notes,
        }
    }
}

/// Levenshtein distance between two names, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

fn parse_number(q: &str) -> Option<i64> {
    let q = q.trim_start_matches('#');
    if let Some(hex) = q.strip_prefix("0x").or_else(|| q.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok();
    }
    q.parse().ok()
}

/// Where `name` occurs in `text` as a whole word.
fn find_token(text: &str, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(rel) = text[from..].find(name) {
        let at = from + rel;
        let end = at + name.len();
        let word = |i: usize| {
            bytes
                .get(i)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        };
        if (at == 0 || !word(at - 1)) && !word(end) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}
