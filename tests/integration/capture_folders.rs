//! `cudawatch parse` of every committed capture folder, as a user types
//! it, against the verdict `sample-reports/README.md` states for it (its
//! table "What `cudawatch parse FOLDER` says of each folder"): a CI job
//! that gates on `parse` of its captures sees what the README promises.

use crate::helpers::{cudawatch, root, run};

/// (folder, label of the verdict's last line) from the README's table.
fn stated() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(root().join("sample-reports/README.md")).unwrap();
    let table = readme
        .split("## What `cudawatch parse FOLDER` says of each folder")
        .nth(1)
        .expect("the README's table of folders");
    let mut out = Vec::new();
    for row in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let verdict = cells[1].trim().to_string();
        for folder in cells[0].trim_start_matches("| ").split(", ") {
            out.push((folder.trim_matches('`').to_string(), verdict.clone()));
        }
    }
    out
}

#[test]
fn every_capture_folder_parses_to_the_verdict_its_readme_states() {
    let stated = stated();
    let folders: Vec<String> = std::fs::read_dir(root().join("sample-reports"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for folder in &folders {
        let (_, verdict) = stated
            .iter()
            .find(|(f, _)| f == folder)
            .unwrap_or_else(|| panic!("sample-reports/README.md states no verdict for {folder}/"));
        let out = run(cudawatch()
            .args(["--color", "never", "parse"])
            .arg(root().join("sample-reports").join(folder)));
        let last = out
            .stderr
            .lines()
            .chain(out.stdout.lines())
            .rfind(|l| {
                ["CLEAN:", "FINDINGS:", "FAILED:", "PASSED:", "INCONCLUSIVE:"]
                    .iter()
                    .any(|h| l.starts_with(h))
            })
            .unwrap_or_else(|| panic!("{folder}: no verdict\n{}", out.stderr));
        let (label, code) = match verdict.as_str() {
            "CLEAN" => ("CLEAN: ", 0),
            "FINDINGS" => ("FINDINGS: ", 1),
            "INCONCLUSIVE, with findings" => ("INCONCLUSIVE: with findings: ", 3),
            "INCONCLUSIVE, with failed checks" => ("INCONCLUSIVE: with failed checks: ", 3),
            "INCONCLUSIVE" => ("INCONCLUSIVE: ", 3),
            other => panic!("{folder}: the README states {other:?}"),
        };
        assert!(last.starts_with(label), "{folder}: {last}");
        if verdict == "INCONCLUSIVE" {
            assert!(!last.starts_with("INCONCLUSIVE: with "), "{folder}: {last}");
        }
        assert_eq!(out.code, code, "{folder}: {last}");
    }
}
