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
    "tools",
    "rundir",
    "judge",
    "render",
];
/// Modules anyone may use.
const LEAVES: &[&str] = &["errors", "exit_codes", "words"];

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
