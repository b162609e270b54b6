//! The HTML report in headless Chromium (tests/node/html-check.mjs,
//! Playwright driving Debian's chromium): what a reader sees matches the JSON report
//! of the same real H100 run, the page makes no request, and markup in a
//! kernel name shows as text.
//!
//! Needs node, tests/node/node_modules (npm ci) and /usr/bin/chromium;
//! `.ci/run` installs them and sets CUDAWATCH_REQUIRE_TEST_TOOLS=1, so there
//! a missing browser fails instead of skipping.

use std::path::Path;
use std::process::Command;

use crate::helpers::{cudawatch, read_json, require_tool, root, run};

/// What html-check.mjs saw of the page in headless Chromium.
fn in_chromium(html: &Path, screenshot: Option<&Path>) -> serde_json::Value {
    in_chromium_at(html, screenshot, 1200)
}

/// The same, in a viewport `width` pixels wide.
fn in_chromium_at(html: &Path, screenshot: Option<&Path>, width: u32) -> serde_json::Value {
    let dir = root().join("tests/node");
    let chromium = std::env::var("CHROMIUM").unwrap_or("/usr/bin/chromium".into());
    require_tool("chromium", Path::new(&chromium));
    require_tool("playwright-core", &dir.join("node_modules/playwright-core"));
    let mut cmd = Command::new("node");
    cmd.current_dir(&dir).arg("html-check.mjs").arg(html);
    match screenshot {
        Some(png) => cmd.arg(png),
        None => cmd.arg("-"),
    };
    cmd.arg(width.to_string());
    let out = cmd.output().expect("node runs");
    assert!(
        out.status.success(),
        "html-check.mjs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("html-check.mjs prints JSON")
}

/// Renders a saved report as HTML and JSON in one `cudawatch report`.
fn render(report: &Path, dir: &Path) -> (std::path::PathBuf, serde_json::Value) {
    let html = dir.join("report.html");
    let json = dir.join("report.json");
    let mut cmd = cudawatch();
    cmd.current_dir(dir).arg("report").arg(report).args([
        "--report",
        &format!("html={}", html.display()),
        "--report",
        &format!("json={}", json.display()),
    ]);
    let out = run(cmd);
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    (html, read_json(&json))
}

#[test]
#[ignore = "needs headless Chromium and tests/node (npm ci), then cargo test -- --include-ignored"]
fn the_page_shows_the_checklist_findings_and_coalescing_chart_of_a_real_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (html, json) = render(
        &root().join("docs/examples/coalescing.report.json"),
        tmp.path(),
    );
    let screenshot = std::env::var_os("CUDAWATCH_SCREENSHOT").map(std::path::PathBuf::from);
    let shown = in_chromium(&html, screenshot.as_deref());

    // Self-contained: the only request is the file itself; nothing logged.
    let url = shown["url"].as_str().unwrap();
    assert_eq!(shown["requests"], serde_json::json!([url]), "{shown}");
    assert_eq!(shown["console"], serde_json::json!([]));
    assert_eq!(shown["scripts"], 0);

    // Every checklist item of the JSON report is shown with its status.
    let items = json["checklist"].as_array().unwrap();
    let rows = shown["checklist"].as_array().unwrap();
    assert_eq!(rows.len(), items.len());
    assert_eq!(items.len(), 13);
    for (row, item) in rows.iter().zip(items) {
        assert_eq!(row["id"], item["id"]);
        assert_eq!(row["status"], item["status"], "{row}");
        assert_eq!(row["evidence"], item["evidence"]);
        assert_eq!(row["visible"], true);
    }
    let coalescing = rows
        .iter()
        .find(|r| r["id"] == "coalescing_within_thresholds")
        .unwrap();
    assert_eq!(coalescing["status"], "fail");
    assert!(
        shown["verdict"][0]
            .as_str()
            .unwrap()
            .contains("coalescing within thresholds")
    );

    // The finding carries its source, the planted line highlighted.
    let findings = shown["findings"].as_array().unwrap();
    assert_eq!(findings.len(), json["findings"].as_array().unwrap().len());
    assert!(
        findings[0]["highlighted"]
            .as_str()
            .unwrap()
            .contains("12 |   if (i < n) out[i] = in[(size_t)i * stride];  // BUG: strided"),
        "{}",
        findings[0]
    );

    // One bar per kernel: the strided gather's wasted part is drawn at 78%,
    // the coalesced one has none.
    let bars = shown["chart"].as_array().unwrap();
    assert_eq!(bars.len(), json["coalescing"].as_array().unwrap().len());
    let bar = |name: &str| {
        bars.iter()
            .find(|b| b["kernel"].as_str().unwrap().starts_with(name))
            .unwrap_or_else(|| panic!("{name} charted"))
    };
    let strided = bar("gather_strided");
    assert!(strided["wasted_pct"].as_str().unwrap().starts_with("77.8"));
    assert!(strided["wasted_width"].as_f64().unwrap() > 100.0);
    assert_eq!(bar("gather_coalesced")["wasted_width"], 0.0);
}

#[test]
#[ignore = "needs headless Chromium and tests/node (npm ci), then cargo test -- --include-ignored"]
fn a_kernel_named_script_renders_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    // A real report, with the kernel renamed to markup a page must not run.
    let evil = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    let mut report = read_json(&root().join("docs/examples/coalescing.report.json"));
    for site in report["findings"].as_array_mut().unwrap() {
        site["kernel"] = evil.into();
        site["location"]["file"] = format!("/src/{evil}.cu").into();
    }
    for kernel in report["coalescing"].as_array_mut().unwrap() {
        kernel["kernel"] = evil.into();
    }
    report["target"] = serde_json::json!([evil]);
    let path = tmp.path().join("evil.json");
    std::fs::write(&path, report.to_string()).unwrap();
    let (html, _) = render(&path, tmp.path());
    let shown = in_chromium(&html, None);
    assert_eq!(shown["scripts"], 0);
    assert_eq!(shown["dialogs"], serde_json::json!([]));
    let url = shown["url"].as_str().unwrap();
    assert_eq!(
        shown["requests"],
        serde_json::json!([url]),
        "no img request"
    );
    assert_eq!(shown["findings"][0]["kernel"], evil, "shown as text");
    assert!(
        shown["body_text"]
            .as_str()
            .unwrap()
            .contains(&format!("/src/{evil}.cu:12")),
        "the path shows as text too"
    );
    assert_eq!(shown["chart"][0]["label"], evil);
    assert!(shown["title"].as_str().unwrap().contains(evil));
}

#[test]
#[ignore = "needs headless Chromium and tests/node (npm ci), then cargo test -- --include-ignored"]
fn stage_and_check_names_are_never_broken_mid_word_on_a_narrow_screen() {
    // Before: `td { overflow-wrap: anywhere }` let the table squeeze its
    // first column until "memcheck" was drawn as "memche" / "ck".
    let tmp = tempfile::tempdir().unwrap();
    for case in ["coalescing", "torch_train_clean"] {
        let (html, _) = render(
            &root().join(format!("docs/examples/{case}.report.json")),
            tmp.path(),
        );
        for width in [400, 800] {
            let shown = in_chromium_at(&html, None, width);
            assert_eq!(
                shown["split_words"],
                serde_json::json!([]),
                "{case} at {width}px"
            );
            assert!(!shown["stages"].as_array().unwrap().is_empty());
        }
    }
}
