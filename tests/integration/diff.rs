//! `cudawatch diff OLD NEW`: a site is fixed only when the tool that found
//! it checked NEW to its end, and nothing from either report reaches the
//! terminal raw.

use crate::helpers::{cudawatch, read_json, run};
use crate::run::fake_run;

/// A run of `case`'s memcheck capture (with `extra` flags) and its report.
fn memcheck_run(
    tmp: &tempfile::TempDir,
    name: &str,
    case: &str,
    extra: &[&str],
) -> std::path::PathBuf {
    let dir = tmp.path().join(name);
    run(fake_run(case, &dir, "memcheck", extra));
    dir.join("report.json")
}

#[test]
fn a_new_report_that_checked_nothing_fixes_nothing() {
    // Before: NEW made with compute-sanitizer missing listed every old bug
    // as "fixed", exit 0.
    let tmp = tempfile::tempdir().unwrap();
    let old = memcheck_run(&tmp, "old", "oob_write", &[]);
    assert!(!read_json(&old)["findings"].as_array().unwrap().is_empty());
    // compute-sanitizer on no path cudawatch looks at: the stage is
    // inconclusive and the report has no findings.
    let blind = tmp.path().join("blind");
    let out = run(cudawatch()
        .env("PATH", "/usr/bin:/bin")
        .env_remove("CUDA_HOME")
        .args(["run", "--stages", "memcheck", "--out-dir"])
        .arg(&blind)
        .args(["--", "sh", "-c", "true"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let blind = blind.join("report.json");
    let out = run(cudawatch()
        .args(["diff", "--format", "json"])
        .arg(&old)
        .arg(&blind));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    let diff: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(diff["fixed"].as_array().unwrap().is_empty(), "{diff}");
    assert!(
        !diff["not_rechecked"].as_array().unwrap().is_empty(),
        "{diff}"
    );
    let text = run(cudawatch().arg("diff").arg(&old).arg(&blind));
    assert!(text.stdout.contains("fixed (0)"), "{}", text.stdout);
    assert!(text.stdout.contains("not checked again"), "{}", text.stdout);

    // The control: a NEW whose memcheck ran to its end and found nothing.
    let fixed = memcheck_run(&tmp, "fixed", "clean", &[]);
    let out = run(cudawatch()
        .args(["diff", "--format", "json"])
        .arg(&old)
        .arg(&fixed));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let diff: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(!diff["fixed"].as_array().unwrap().is_empty(), "{diff}");
}

#[test]
fn diff_gates_like_the_run_library_internals_list_but_do_not_fail() {
    // Run directories' report.json files are saved before judging. Before,
    // `diff` compared them unjudged: cuDNN's racecheck hazards, which the
    // run itself did not gate, failed the diff.
    let tmp = tempfile::tempdir().unwrap();
    let racecheck_run = |name: &str, case: &str| {
        let dir = tmp.path().join(name);
        let out = run(fake_run(case, &dir, "plain,racecheck", &[]));
        (out.code, dir.join("report.json"))
    };
    let (_, clean) = racecheck_run("clean", "clean");
    let (code, library) = racecheck_run("library", "beyond/library_kernels");
    assert_eq!(code, 0, "the run passes with library hazards");
    let out = run(cudawatch().arg("diff").arg(&clean).arg(&library));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("new (6)") && out.stdout.contains("(×1, cuDNN)"),
        "{}",
        out.stdout
    );
    // A race in the user's own kernel is new and fails it.
    let (code, user) = racecheck_run("user", "smem_race");
    assert_eq!(code, 1);
    let out = run(cudawatch().arg("diff").arg(&clean).arg(&user));
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
}

#[test]
fn diff_of_foreign_reports_prints_no_control_character() {
    let tmp = tempfile::tempdir().unwrap();
    let old = memcheck_run(&tmp, "old", "oob_write", &[]);
    let mut report = read_json(&old);
    let hostile = "\u{1b}[2J\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\rCLEAN: no errors found\u{202e}";
    for site in report["findings"].as_array_mut().unwrap() {
        site["message"] = serde_json::json!(format!("{hostile} message"));
        site["kernel"] = serde_json::json!(format!("{hostile}kernel"));
        site["id"] = serde_json::json!("forged-id");
        if let Some(location) = site["location"].as_object_mut() {
            location.insert("file".into(), serde_json::json!(format!("{hostile}.cu")));
        }
    }
    let new = tmp.path().join("hostile.json");
    std::fs::write(&new, serde_json::to_vec(&report).unwrap()).unwrap();
    let out = run(cudawatch().arg("diff").arg(&old).arg(&new));
    assert!(out.stdout.contains("new ("), "{}", out.stdout);
    // The kernel is named (it is what a kernel author recognises), cleaned.
    assert!(out.stdout.contains("kernel: "), "{}", out.stdout);
    for c in out.stdout.chars() {
        assert!(
            c == '\n' || !(c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "{:?} reached the terminal: {:?}",
            c,
            out.stdout
        );
    }
    assert!(
        !out.stdout.lines().any(|l| l.starts_with("CLEAN")),
        "{}",
        out.stdout
    );
    // JSON stays lossless: the foreign text comes back exactly, escaped
    // by JSON itself, for a program to judge.
    let json = run(cudawatch()
        .args(["diff", "--format", "json"])
        .arg(&old)
        .arg(&new));
    let diff: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        diff["new"][0]["kernel"],
        serde_json::json!(format!("{hostile}kernel"))
    );
}

#[test]
fn a_diff_of_two_different_programs_is_refused() {
    // Before: `diff oob_write.report.json clean.report.json` listed the bug
    // as fixed (1), exit 0.
    let examples = crate::helpers::root().join("docs/examples");
    let out = run(cudawatch()
        .arg("diff")
        .arg(examples.join("oob_write.report.json"))
        .arg(examples.join("clean.report.json")));
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("is a report of oob_write") && out.stderr.contains("of clean"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("fixed"), "{}", out.stdout);
    // Asked for on purpose, it is compared.
    let out = run(cudawatch()
        .args(["diff", "--different-programs"])
        .arg(examples.join("oob_write.report.json"))
        .arg(examples.join("clean.report.json")));
    assert_eq!(out.code, 0, "{}", out.stderr);
}
