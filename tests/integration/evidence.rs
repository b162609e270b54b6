//! CLEAN only on positive evidence: every way a stage could look clean
//! without having checked the program (a tool that lies with its exit
//! code or dies after its summary, a cudawatch killed mid-run, an artifact
//! too large to read) makes it inconclusive (exit 3), never clean.

use std::path::Path;

use crate::helpers::{cudawatch, json, run};
use crate::run::{fake_run, stage, start_and_wait_for, wait_for_log, wait_until};

/// `cudawatch run` of the clean capture's memcheck with the fake told how
/// to end: the exit code and the stage's outcome and reason.
fn clean_memcheck_ending(env: &[(&str, &str)]) -> (i32, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut cmd = fake_run("clean", &dir, "memcheck", &["--format", "json"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(cmd);
    let report = json(&out);
    let memcheck = &report["stages"][0];
    (
        out.code,
        memcheck["outcome"].as_str().unwrap().to_string(),
        memcheck["reason"].as_str().unwrap().to_string(),
    )
}

#[test]
fn a_sanitizer_that_prints_no_errors_then_dies_is_not_clean() {
    // Before: "ERROR SUMMARY: 0 errors", the XML written, then SIGSEGV: clean, exit 0.
    let (code, outcome, reason) = clean_memcheck_ending(&[("FAKE_MODE", "crash-after-summary")]);
    assert_eq!((code, outcome.as_str()), (3, "inconclusive"), "{reason}");
    assert!(reason.contains("killed by signal 11"), "{reason}");
}

#[test]
fn a_sanitizer_exit_code_that_contradicts_its_summary_is_not_clean() {
    // 86 is the code cudawatch asks for when errors are found.
    let (code, outcome, reason) = clean_memcheck_ending(&[("FAKE_EXIT", "86")]);
    assert_eq!((code, outcome.as_str()), (3, "inconclusive"), "{reason}");
    assert!(reason.contains("exited 86"), "{reason}");
    let (code, outcome, reason) = clean_memcheck_ending(&[("FAKE_EXIT", "1")]);
    assert_eq!((code, outcome.as_str()), (3, "inconclusive"), "{reason}");
    assert!(reason.contains("disagree"), "{reason}");
    // The control: the capture as it was.
    let (code, outcome, reason) = clean_memcheck_ending(&[]);
    assert_eq!((code, outcome.as_str()), (0, "clean"), "{reason}");
}

#[test]
fn a_sanitizer_stopped_by_the_programs_own_failure_is_blocked_by_it_not_clean() {
    // api_error: the program exits 1 at its first check; initcheck says
    // "Target application returned an error" and exits 1 with 0 errors.
    // It checked the program up to that failure only: blocked by the plain
    // run's finding (the gate fails on the finding, exit 1), never clean,
    // and alone (no plain run to name the failure) inconclusive.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "api_error",
        &tmp.path().join("run"),
        "plain,initcheck",
        &["--format", "json"],
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = json(&out);
    let initcheck = stage(&report, "initcheck");
    assert_eq!(initcheck["outcome"], "inconclusive", "{initcheck}");
    let by = initcheck["blocked_by"].as_str().unwrap();
    assert!(by.contains("api_error.cu:9"), "{initcheck}");
    let out = run(fake_run(
        "api_error",
        &tmp.path().join("alone"),
        "initcheck",
        &["--format", "json"],
    ));
    assert_eq!(out.code, 3, "{}", out.stderr);
}

#[test]
fn a_run_directory_left_by_a_killed_cudawatch_is_not_clean_and_its_tool_died_too() {
    // Before: `cudawatch report DIR` said "CLEAN ... not checked: ..." and
    // exited 0, and the sanitizer stage ran on, orphaned.
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let dir = tmp.path().join("run");
    let mut cmd = fake_run("clean", &dir, "plain,memcheck,racecheck", &["-j", "1"]);
    cmd.env("FAKE_MODE", "hang").env("FAKE_LOG", &log);
    let mut child = start_and_wait_for(&mut cmd, &log, "memcheck");
    wait_for_log(&log, "pid ");
    let fake_pid: i32 = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("pid ").map(|p| p.trim().parse().unwrap()))
        .expect("the fake logs its pid");
    child.kill().unwrap(); // SIGKILL: no handler of cudawatch's runs
    child.wait().unwrap();
    wait_until("the orphaned sanitizer dying with cudawatch", || {
        !alive(fake_pid)
    });

    let out = run(cudawatch().args(["report", "--format", "json"]).arg(&dir));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = json(&out);
    let memcheck = stage(&report, "memcheck");
    assert_eq!(memcheck["outcome"], "inconclusive", "{memcheck}");
    assert!(
        memcheck["reason"]
            .as_str()
            .unwrap()
            .contains("never finished"),
        "{memcheck}"
    );
    let racecheck = stage(&report, "racecheck");
    assert_eq!(racecheck["outcome"], "inconclusive", "{racecheck}");
    assert!(
        racecheck["reason"].as_str().unwrap().starts_with("not run"),
        "{racecheck}"
    );
    // The terminal verdict says so too.
    let out = run(cudawatch().arg("report").arg(&dir));
    assert_eq!(out.code, 3);
    assert!(!out.stdout.contains("CLEAN"), "{}", out.stdout);
}

#[test]
fn an_artifact_too_large_to_read_is_not_an_empty_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(fake_run("clean", &dir, "memcheck", &[]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Sparse: 17 GiB on paper, nothing on disk.
    let stdout = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("memcheck/stdout"))
        .unwrap();
    stdout.set_len(17 << 30).unwrap();
    let out = run(cudawatch().args(["report", "--format", "json"]).arg(&dir));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let memcheck = stage(&json(&out), "memcheck").clone();
    assert_eq!(memcheck["outcome"], "inconclusive", "{memcheck}");
    assert!(
        memcheck["reason"]
            .as_str()
            .unwrap()
            .contains("could not read memcheck/stdout"),
        "{memcheck}"
    );
}

/// Whether `pid` is a live process (a zombie waiting for its reaper is not).
fn alive(pid: i32) -> bool {
    let stat = Path::new("/proc").join(pid.to_string()).join("stat");
    match std::fs::read_to_string(stat) {
        Ok(text) => !text
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn a_stage_named_twice_is_refused_before_anything_runs() {
    // Before: both rows showed the first result, and the second run
    // overwrote the first's artifacts.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(fake_run("oob_write", &dir, "memcheck,plain,memcheck", &[]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("--stages names memcheck twice"),
        "{}",
        out.stderr
    );
    assert!(!dir.exists(), "nothing ran");
}
