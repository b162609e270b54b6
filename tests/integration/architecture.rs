//! The folder tree reads as the data flow, and nothing imports upward:
//! each part of `src/` may use only the parts below it in this list (and
//! the shared leaves `errors` and `exit_codes`). A new arrow back up fails
//! here, with the file and the import, before it becomes a cycle.

use std::path::Path;

use crate::helpers::root;

/// Parts from the top (the command line, which orchestrates everything)
/// down to the bottom (the formats, which only read the report).
const LAYERS: &[&str] = &[
    "cli",
    "sweep",
    "doctor",
    "supervisor",
    "plan",
    "rundir",
    "tools",
    "judge",
    "render",
];
/// Modules anyone may use.
const LEAVES: &[&str] = &["errors", "executables", "exit_codes", "safe_files", "words"];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The parts of `crate::PART` paths in `text`.
fn crate_imports(text: &str) -> Vec<String> {
    text.match_indices("crate::")
        .filter(|(i, _)| {
            // `cudawatch_crate::` and the like are not ours.
            !text[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        })
        .map(|(i, m)| {
            text[i + m.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn no_part_of_src_imports_a_part_above_it() {
    let src = root().join("src");
    let mut violations = Vec::new();
    for layer in LAYERS {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "src/{layer}/ exists");
        let rank = LAYERS.iter().position(|l| l == layer).unwrap();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for target in crate_imports(&text) {
                let allowed = LEAVES.contains(&target.as_str())
                    || LAYERS
                        .iter()
                        .position(|l| *l == target)
                        .is_some_and(|r| r >= rank);
                if !allowed {
                    violations.push(format!(
                        "{} uses crate::{target}",
                        file.strip_prefix(root()).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "upward imports:\n{}",
        violations.join("\n")
    );
    // Every top-level module is a part or a leaf: nothing lies loose.
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .replace(".rs", "");
        assert!(
            LAYERS.contains(&name.as_str()) || LEAVES.contains(&name.as_str()) || name == "main",
            "src/{name} is neither a part nor a leaf"
        );
    }
}

#[test]
fn parsers_and_the_model_stay_pure() {
    // Bytes in, typed findings out: no processes, no async, no terminal.
    for krate in ["parsers/src", "model/src", "knowledge/src"] {
        let mut files = Vec::new();
        rust_files(&root().join(krate), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for banned in [
                "tokio",
                "std::process",
                "eprintln!",
                "println!",
                "std::fs::",
            ] {
                assert!(!text.contains(banned), "{} uses {banned}", file.display());
            }
        }
    }
    let model = std::fs::read_to_string(root().join("model/Cargo.toml")).unwrap();
    let deps = model.split("[dependencies]").nth(1).unwrap();
    let deps: Vec<&str> = deps
        .lines()
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(deps.len(), 1, "the model needs serde alone: {deps:?}");
}

#[test]
fn async_code_lives_in_the_supervisor_alone() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let supervisor = root().join("src/supervisor");
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&supervisor)) {
        let text = std::fs::read_to_string(file).unwrap();
        for banned in ["tokio", "async fn", ".await", "async move"] {
            if text.contains(banned) {
                found.push(format!(
                    "{} uses {banned}",
                    file.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "async outside src/supervisor:\n{}",
        found.join("\n")
    );
}

/// A file's module path inside its crate (`sanitizer::xml::reader`).
fn module_of(krate: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(krate).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The paths a file names through `crate::`, `super::` and `self::`, with
/// `{a, b::c}` groups opened, as segments after the keyword.
fn named_paths(text: &str) -> Vec<(String, Vec<String>)> {
    fn ident(s: &str) -> (&str, &str) {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        (&s[..end], &s[end..])
    }
    fn walk(rest: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut segments = prefix;
        let mut rest = rest;
        loop {
            let trimmed = rest.trim_start();
            if let Some(group) = trimmed.strip_prefix('{') {
                // Split the group at its top-level commas.
                let mut depth = 0;
                let mut start = 0;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            walk(&group[start..i], segments.clone(), out);
                            return;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            walk(&group[start..i], segments.clone(), out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            let (name, after) = ident(trimmed);
            if name.is_empty() {
                break;
            }
            segments.push(name.to_string());
            match after.strip_prefix("::") {
                Some(next) => rest = next,
                None => break,
            }
        }
        out.push(segments);
    }
    let mut found = Vec::new();
    for keyword in ["crate::", "super::", "self::"] {
        for (i, _) in text.match_indices(keyword) {
            if text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut paths = Vec::new();
            walk(&text[i + keyword.len()..], Vec::new(), &mut paths);
            for path in paths {
                found.push((keyword.trim_end_matches("::").to_string(), path));
            }
        }
    }
    found
}

#[test]
fn no_module_imports_in_a_circle() {
    // Within each crate, file by file: a module may use its ancestors'
    // items (the parent is the interface its children share), but two
    // modules that use each other, directly or round a longer loop, are
    // one module in two files (as `sanitizer/xml/reader.rs` and
    // `record.rs` were).
    let mut circles = Vec::new();
    for krate in ["src", "parsers/src", "model/src", "knowledge/src"] {
        let base = root().join(krate);
        let mut files = Vec::new();
        rust_files(&base, &mut files);
        let modules: Vec<Vec<String>> = files.iter().map(|f| module_of(&base, f)).collect();
        let index_of = |m: &[String]| modules.iter().position(|x| x == m);
        let mut edges: Vec<std::collections::BTreeSet<usize>> =
            vec![Default::default(); files.len()];
        for (from, file) in files.iter().enumerate() {
            // Doc links (`[`super::verdict`]`) are not imports.
            let text: String = std::fs::read_to_string(file)
                .unwrap()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let here = &modules[from];
            for (keyword, path) in named_paths(&text) {
                let mut target: Vec<String> = match keyword.as_str() {
                    "crate" => Vec::new(),
                    "super" => here[..here.len().saturating_sub(1)].to_vec(),
                    _ => here.clone(),
                };
                let mut segments = path.iter();
                // `super::super::x`
                let mut pending: Vec<&String> = Vec::new();
                for s in segments.by_ref() {
                    if s == "super" {
                        target.pop();
                    } else {
                        pending.push(s);
                        break;
                    }
                }
                pending.extend(segments);
                // The deepest module the path names.
                for s in pending {
                    let mut next = target.clone();
                    next.push(s.clone());
                    if index_of(&next).is_some() {
                        target = next;
                    } else {
                        break;
                    }
                }
                let Some(to) = index_of(&target) else {
                    continue;
                };
                let is_ancestor = target.len() < here.len() && here.starts_with(&target);
                if to != from && !is_ancestor {
                    edges[from].insert(to);
                }
            }
        }
        // A module reaches itself again: a circle.
        for start in 0..files.len() {
            let mut seen = vec![false; files.len()];
            let mut stack: Vec<usize> = edges[start].iter().copied().collect();
            while let Some(n) = stack.pop() {
                if n == start {
                    circles.push(format!("{krate}: {}", modules[start].join("::")));
                    break;
                }
                if !std::mem::replace(&mut seen[n], true) {
                    stack.extend(edges[n].iter().copied());
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "modules in an import circle:\n{}",
        circles.join("\n")
    );
}
