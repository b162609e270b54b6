//! Record floods (issue 23): a sanitizer that writes one record per
//! faulting thread can take hours on a real model (ViT-tiny's initcheck: 33
//! million reads of what Hopper's GEMMs wrote). Without call stacks
//! (`--show-backtrace no`) compute-sanitizer keeps each launch's first 256
//! records, warns once per launch, and counts the rest as "skipped": real
//! captures in sample-reports/beyond/floods-* and vit_tiny_step/.

use std::path::Path;

use serde_json::Value;

use crate::helpers::{cudawatch, json, read_json, root, run, sample};
use crate::run::stage;

/// The totals the tool printed, as the report keeps them beside its input.
fn tool_summary(report: &Value) -> &Value {
    report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|i| i.get("summary"))
        .expect("the text log's summary")
}

fn parse_json(files: &[&Path]) -> (i32, Value, String) {
    let out = run(cudawatch().args(["parse", "--format", "json"]).args(files));
    let report = json(&out);
    (out.code, report, out.stderr)
}

#[test]
fn records_dropped_by_the_tool_make_lower_bounds_not_an_inconclusive_run() {
    // The planted uninitialised read: 512 reads, of which the tool kept 256.
    let dir = sample("beyond/floods-uninit_read");
    let (code, report, stderr) = parse_json(&[
        &dir.join("initcheck-flood.xml"),
        &dir.join("initcheck-flood.stdout"),
    ]);
    assert_eq!(code, 1, "the user's read still gates: {stderr}");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "the warning is no site: {findings:?}");
    let site = &findings[0];
    assert_eq!(site["kind"], "uninitialized_read");
    assert_eq!(
        site["location"]["line"], 6,
        "the line survives without stacks"
    );
    assert_eq!(site["count"], 256);
    assert_eq!(site["count_at_least"], true);
    assert!(
        report["warnings"].as_array().is_none_or(|w| w.is_empty()),
        "{:?}",
        report["warnings"]
    );
    let summary = tool_summary(&report);
    assert_eq!(summary["skipped"], 256, "the tool's count of the rest");
    assert_eq!(summary["errors"], 257, "256 records and the warning");

    let out = run(cudawatch()
        .args(["--color", "never", "parse"])
        .arg(dir.join("initcheck-flood.xml"))
        .arg(dir.join("initcheck-flood.stdout")));
    // `parse` prints its report on stdout.
    assert!(out.stdout.contains("×256+"), "{}", out.stdout);
    assert!(!out.stdout.contains("INCONCLUSIVE"), "{}", out.stdout);
}

#[test]
fn vit_tinys_initcheck_flood_keeps_every_launch_and_the_tools_total() {
    let tmp = tempfile::tempdir().unwrap();
    let xml = tmp.path().join("initcheck.xml");
    let unpacked = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(sample("beyond/vit_tiny_step/initcheck-flood.xml.gz"))
        .output()
        .expect("gzip");
    std::fs::write(&xml, unpacked.stdout).unwrap();
    let text = tmp.path().join("initcheck.stdout");
    std::fs::copy(
        sample("beyond/vit_tiny_step/initcheck-flood-tail.stdout"),
        &text,
    )
    .unwrap();
    let (_, report, stderr) = parse_json(&[&xml, &text]);
    let findings = report["findings"].as_array().unwrap();
    let kept: u64 = findings.iter().map(|s| s["count"].as_u64().unwrap()).sum();
    // 46,517 in the ERROR SUMMARY: 181 launches x 256 records, and the
    // 181 warnings, which are no finding.
    assert_eq!(kept, 181 * 256, "{stderr}");
    assert!(findings.iter().all(|s| s["count_at_least"] == true));
    assert!(
        findings.iter().all(|s| s["kind"] == "uninitialized_read"),
        "{findings:?}"
    );
    let summary = tool_summary(&report);
    assert_eq!(summary["skipped"], 33_462_336u64);
}

/// A run whose initcheck floods: the fake prints the planted read's
/// records without end while it has call stacks, and replays the real
/// stackless capture when asked for `--show-backtrace no`.
fn flooding_run(out_dir: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = cudawatch();
    cmd.env("FAKE_CASE", sample("beyond/floods-uninit_read"))
        .env("FAKE_MODE", "flood")
        .args(["--color", "never", "run", "--out-dir"])
        .arg(out_dir)
        .args(["--stages", "plain,initcheck", "--grace", "0.5"])
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .args(extra)
        .args(["--", "sh", "-c", "echo uninit_read done"]);
    cmd
}

#[test]
fn a_flooding_stage_is_stopped_and_run_again_without_call_stacks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(&mut flooding_run(
        &dir,
        &["--flood-records", "1000", "--timeout", "60"],
    ));
    assert_eq!(out.code, 1, "the user's read gates: {}", out.stderr);
    let report = read_json(&dir.join("report.json"));
    let initcheck = stage(&report, "initcheck");
    assert_eq!(initcheck["outcome"], "findings", "{initcheck}");
    let command: Vec<&str> = initcheck["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        command.windows(2).any(|w| w == ["--show-backtrace", "no"]),
        "{command:?}"
    );
    assert_eq!(
        command.iter().filter(|a| **a == "--show-backtrace").count(),
        1,
        "initcheck's own `device` is replaced: {command:?}"
    );
    let reason = initcheck["reason"].as_str().unwrap();
    assert!(
        reason.contains("512 errors reported by the tool: 256 kept and 256 skipped"),
        "{reason}"
    );
    let notes = read_json(&dir.join("initcheck/stage.json"))["notes"].to_string();
    assert!(notes.contains("more than 1000 records"), "{notes}");
    assert!(
        report["warnings"].to_string().contains("(a flood)"),
        "the report says why too"
    );
    assert!(notes.contains("flooded/initcheck"), "{notes}");
    // The first try is kept, cut where the flood was stopped.
    let first = std::fs::read_to_string(dir.join("flooded/initcheck/stdout")).unwrap();
    assert!(first.matches("\n========= \n").count() > 1000);
    let site = &report["findings"].as_array().unwrap()[0];
    assert_eq!(site["count_at_least"], true);
    assert!(out.stderr.contains("×256+"), "{}", out.stderr);
    // The progress says why the stage goes on, while it goes on.
    let noted = out
        .stderr
        .find("(2/2) initcheck: printed more than 1000 records with call stacks (a flood)")
        .unwrap_or_else(|| panic!("{}", out.stderr));
    let ended = out.stderr.find("(2/2) initcheck findings in").unwrap();
    assert!(noted < ended, "{}", out.stderr);
}

#[test]
fn a_stage_under_the_flood_limit_keeps_its_call_stacks() {
    // The same program replayed whole (257 records) under the default
    // limit: one try, with the stage's own flags.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut cmd = flooding_run(&dir, &[]);
    cmd.env("FAKE_MODE", "replay")
        .env("FAKE_RUN", "initcheck-flood");
    let out = run(&mut cmd);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = read_json(&dir.join("report.json"));
    let initcheck = stage(&report, "initcheck");
    let command = initcheck["command"].to_string();
    assert!(
        command.contains("\"--show-backtrace\",\"device\""),
        "{command}"
    );
    assert!(!dir.join("flooded").exists());
    assert!(!report["warnings"].to_string().contains("flood"));
}
