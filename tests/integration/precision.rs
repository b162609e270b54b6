//! Right beyond the corpus (issue 21), on real H100 captures: a race
//! racecheck calls a warning still gates in the user's kernel, and no
//! verdict says "clean" while it lists findings.

use crate::helpers::{checklist_item, read_json, run};
use crate::run::{fake_run, stage};

#[test]
fn a_warp_level_race_racecheck_calls_a_warning_gates_in_the_users_kernel() {
    // tests/gpu/warp_race.cu: shared memory read across lanes without
    // __syncwarp. racecheck: "Warning: Race reported between Write access at
    // warp_race.cu:10 and Read access at warp_race.cu:12". Before: CLEAN,
    // exit 0, while the race was listed, and "racecheck clean: pass".
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(fake_run("warp_race", &dir, "plain,racecheck", &[]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("gated as error: racecheck calls it warning"),
        "{}",
        out.stderr
    );
    let verdict = out
        .stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("FINDINGS"))
        .unwrap();
    assert!(verdict.contains("warp_race.cu:12"), "{verdict}");
    let report = read_json(&dir.join("report.json"));
    let racecheck = stage(&report, "racecheck");
    assert_eq!(
        racecheck["reason"], "1 hazard reported (0 errors, 1 warning)",
        "the stage says what the tool counted"
    );
    let judged = crate::helpers::json(&run(crate::helpers::cudawatch()
        .args(["report", "--format", "json"])
        .arg(&dir)));
    let race = crate::helpers::site_of_kind(&judged, "race");
    assert_eq!(race["severity"], "error");
    assert_eq!(race["tool_severity"], "warning");
    assert_eq!(checklist_item(&judged, "racecheck_clean")["status"], "fail");
}

#[test]
fn relaxed_to_racechecks_level_the_run_passes_but_is_never_called_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "warp_race",
        &tmp.path().join("run"),
        "plain,racecheck",
        &["--racecheck-warnings", "report"],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let verdict = out.stderr.lines().rev().find(|l| l.contains(": ")).unwrap();
    assert!(!out.stderr.contains("CLEAN"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("PASSED: no error sites; 1 warning or note site listed"),
        "{verdict}\n{}",
        out.stderr
    );
}

#[test]
fn every_human_format_says_when_cudawatch_raised_the_tools_level() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    run(fake_run("warp_race", &dir, "plain,racecheck", &[]));
    let html = tmp.path().join("r.html");
    let out = run(crate::helpers::cudawatch()
        .arg("report")
        .arg(&dir)
        .args(["--report", &format!("html={}", html.display())]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains("gated as error"), "{}", out.stdout);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("gated as error: racecheck calls it warning"),
        "HTML says it too"
    );
}
