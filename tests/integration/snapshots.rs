//! Snapshots of every format, rendered by the binary from real `cudawatch
//! run`s on the H100 (docs/examples/): any change to what a user reads,
//! in any format, shows up as a diff to review. After an intended change:
//! `INSTA_UPDATE=always cargo test --test integration snapshots` (or
//! `cargo insta review`), then read the diff before committing it.

use std::path::Path;

use crate::helpers::{cudawatch, root, run};

/// Renders `case`'s report in every format; returns (format, text) pairs.
fn every_format(case: &str, dir: &Path) -> Vec<(&'static str, String)> {
    let formats = [
        ("json", "json"),
        ("sarif", "sarif"),
        ("junit", "xml"),
        ("markdown", "md"),
        ("html", "html"),
    ];
    let mut cmd = cudawatch();
    // A temporary working directory: no path in the report lies under it, so
    // paths are rendered the same on every machine.
    cmd.current_dir(dir)
        .arg("report")
        .arg(root().join(format!("docs/examples/{case}.report.json")));
    for (format, ext) in formats {
        cmd.args(["--report", &format!("{format}={case}.{ext}")]);
    }
    let out = run(cmd);
    assert!(matches!(out.code, 0 | 1 | 3), "{case}: {}", out.stderr);
    let mut rendered = vec![("terminal", out.stdout)];
    for (format, ext) in formats {
        let text = std::fs::read_to_string(dir.join(format!("{case}.{ext}")))
            .unwrap_or_else(|e| panic!("{case}.{ext}: {e}"));
        rendered.push((format, text));
    }
    rendered
}

fn check(case: &str) {
    let tmp = tempfile::tempdir().unwrap();
    for (format, text) in every_format(case, tmp.path()) {
        insta::assert_snapshot!(format!("{case}.{format}"), text);
    }
}

/// memcheck: an out-of-bounds write folded into one site, a leak, an API error.
#[test]
fn oob_write() {
    check("oob_write");
}

/// racecheck: a shared-memory race with both sides of it.
#[test]
fn smem_race() {
    check("smem_race");
}

/// ncu: a strided gather failing the coalescing check, with its source line.
#[test]
fn coalescing() {
    check("coalescing");
}

/// PyTorch: memcheck crashed (inconclusive), the allocator warning, ncu hints.
#[test]
fn torch_train_clean() {
    check("torch_train_clean");
}
