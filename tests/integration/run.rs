//! `cudawatch run` against fake tools that replay real captures.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::helpers::{captured, cudawatch, finish, json, read_json, root, run, sample};

/// A run of `case` with both fakes, the plain stage replaying the case's
/// plain capture.
pub fn fake_run(case: &str, out_dir: &Path, stages: &str, extra: &[&str]) -> Command {
    let dir = sample(case);
    let mut cmd = cudawatch();
    cmd.env("FAKE_CASE", &dir)
        .arg("run")
        .args(["--out-dir", out_dir.to_str().unwrap(), "--stages", stages])
        .args(if extra.contains(&"--grace") {
            &[][..]
        } else {
            &["--grace", "0.5"][..]
        })
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"));
    // A test may name its own ncu (a wrapper around the fake).
    if !extra.contains(&"--ncu") {
        cmd.arg("--ncu").arg(root().join("tests/fakes/ncu"));
    }
    cmd.args(extra).args(["--", "sh", "-c"]).arg(format!(
        "cat '{0}/plain.stdout'; cat '{0}/plain.stderr' >&2; exit $(cat '{0}/plain.exit')",
        dir.display()
    ));
    cmd
}

/// The stage's raw output, its record and the run's report are on disk,
/// and the report lists them as the stage's artifacts.
fn assert_artifacts_kept(dir: &Path, tool: &str) {
    for file in ["stdout", "stderr", "stage.json"] {
        assert!(dir.join(tool).join(file).exists(), "{tool}/{file} kept");
    }
    let report = read_json(&dir.join("report.json"));
    let artifacts = stage(&report, tool)["artifacts"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        artifacts
            .iter()
            .any(|a| a == &serde_json::json!(format!("{tool}/stdout"))),
        "{artifacts:?}"
    );
}

pub(crate) fn stage<'a>(report: &'a serde_json::Value, tool: &str) -> &'a serde_json::Value {
    report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == tool)
        .unwrap()
}

#[test]
fn a_clean_program_is_clean_in_every_stage_and_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "clean",
        tmp.path(),
        "plain,memcheck,racecheck,initcheck,synccheck",
        &[],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    for s in report["stages"].as_array().unwrap() {
        assert_eq!(s["outcome"], "clean", "{s}");
    }
}

#[test]
fn memcheck_findings_fail_the_gate_and_raw_artifacts_are_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "oob_write",
        tmp.path(),
        "plain,memcheck",
        &["--format", "json"],
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(stage(&report, "memcheck")["outcome"], "findings");
    for file in [
        "memcheck/memcheck.xml",
        "memcheck/stdout",
        "memcheck/stderr",
        "memcheck/stage.json",
        "report.json",
        "run.json",
    ] {
        assert!(tmp.path().join(file).exists(), "{file} kept");
    }
}

#[test]
fn racecheck_hazards_are_findings_even_when_it_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run("smem_race", tmp.path(), "racecheck", &[]).env("FAKE_EXIT", "0"));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    assert_eq!(stage(&report, "racecheck")["outcome"], "findings");
    assert_eq!(stage(&report, "racecheck")["end"]["code"], 0);
}

#[test]
fn a_hanging_tool_times_out_and_is_inconclusive_with_its_output_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(
        fake_run("oob_write", tmp.path(), "memcheck", &["--timeout", "1"]).env("FAKE_MODE", "hang"),
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    let record = read_json(&tmp.path().join("memcheck/stage.json"));
    assert_eq!(record["timed_out"], true);
    assert_eq!(record["killed"], false, "sleep obeys SIGTERM");
    assert!(
        std::fs::read_to_string(tmp.path().join("memcheck/stdout"))
            .unwrap()
            .contains("COMPUTE-SANITIZER")
    );
    let report = read_json(&tmp.path().join("report.json"));
    assert!(
        stage(&report, "memcheck")["reason"]
            .as_str()
            .unwrap()
            .contains("stopped by its timeout")
    );
    // The verdict's first line says why, not only that it is not clean.
    let verdict = out
        .stderr
        .lines()
        .find(|l| l.starts_with("INCONCLUSIVE:"))
        .unwrap_or_default();
    assert!(
        verdict.starts_with("INCONCLUSIVE: memcheck (") && verdict.contains("timeout"),
        "{verdict}"
    );
    assert_artifacts_kept(tmp.path(), "memcheck");
}

#[test]
fn a_tool_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(
        fake_run("oob_write", tmp.path(), "memcheck", &["--timeout", "1"])
            .env("FAKE_MODE", "ignore-sigterm"),
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    let record = read_json(&tmp.path().join("memcheck/stage.json"));
    assert_eq!(record["killed"], true);
    assert_eq!(record["end"]["how"], "signaled");
    assert_eq!(record["end"]["code"], 9);
    assert_artifacts_kept(tmp.path(), "memcheck");
}

#[test]
fn a_crashing_tool_without_a_summary_is_inconclusive() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run("oob_write", tmp.path(), "memcheck", &[]).env("FAKE_MODE", "crash"));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    let reason = stage(&report, "memcheck")["reason"].as_str().unwrap();
    assert!(
        reason.contains("no summary line") && reason.contains("signal 11"),
        "{reason}"
    );
    assert_artifacts_kept(tmp.path(), "memcheck");
    // It was tried twice, and the report says so; the first try is kept.
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("compute-sanitizer itself died of signal 11 (SIGSEGV) before its summary, and was run again alone; the first try is in crashed/memcheck"),
        "{warnings}"
    );
    assert!(tmp.path().join("crashed/memcheck/stdout").is_file());
}

#[test]
fn a_tool_that_crashes_once_is_judged_on_its_second_try() {
    // compute-sanitizer 2025.3.1 died of SIGSEGV at random points under a
    // JAX step (sample-reports/beyond/jax_step); the next run was whole.
    let tmp = tempfile::tempdir().unwrap();
    let mark = tmp.path().join("crashed-once");
    let out_dir = tmp.path().join("run");
    let out = run(fake_run("oob_write", &out_dir, "plain,memcheck", &[])
        .env("FAKE_MODE", "crash-once")
        .env("FAKE_CRASH_MARK", &mark));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = read_json(&out_dir.join("report.json"));
    assert_eq!(stage(&report, "memcheck")["outcome"], "findings");
    assert_eq!(stage(&report, "memcheck")["end"]["how"], "exited");
    assert!(report["findings"].to_string().contains("oob_write"));
    assert!(
        report["warnings"]
            .to_string()
            .contains("and was run again alone")
    );
    let first = std::fs::read_to_string(out_dir.join("crashed/memcheck/stdout")).unwrap();
    assert!(!first.contains("ERROR SUMMARY"), "{first}");
    assert!(out.stderr.contains("[again, alone]"), "{}", out.stderr);
}

#[test]
fn a_clean_rerun_never_erases_what_a_crashed_try_saw() {
    // compute-sanitizer printed invalid writes, then died of SIGSEGV
    // before its summary; the stage ran again and the rerun was clean.
    // Before, the verdict was CLEAN and the first try's errors sat unread
    // in crashed/memcheck.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let out = run(fake_run("oob_write", &out_dir, "plain,memcheck", &[])
        .env("FAKE_MODE", "records-then-crash-once")
        .env("FAKE_CRASH_MARK", tmp.path().join("crashed-once"))
        .env("FAKE_RERUN_CASE", sample("clean")));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = read_json(&out_dir.join("report.json"));
    let memcheck = stage(&report, "memcheck");
    assert_eq!(memcheck["outcome"], "findings", "{memcheck}");
    assert!(
        memcheck["reason"]
            .as_str()
            .unwrap()
            .contains("seen only in an earlier try"),
        "{memcheck}"
    );
    let attempt = &memcheck["attempts"][0];
    assert_eq!(attempt["folder"], "crashed/memcheck", "{memcheck}");
    assert_eq!(attempt["judged"], true);
    assert!(attempt["sites_only_here"].as_u64().unwrap() >= 1);
    let site = crate::helpers::site_of_kind(&report, "invalid_access");
    assert!(
        site["only_in_try"]
            .as_str()
            .unwrap()
            .contains("crashed/memcheck"),
        "{site}"
    );
    assert!(
        out.stderr
            .contains("only in: the try kept in crashed/memcheck"),
        "{}",
        out.stderr
    );
    // Saved and read back, the same.
    let again = run(cudawatch()
        .args(["report", "--format", "json"])
        .arg(&out_dir));
    assert_eq!(again.code, 1, "{}", again.stderr);
}

#[test]
fn truncated_xml_is_inconclusive_and_keeps_the_records_it_had() {
    let tmp = tempfile::tempdir().unwrap();
    let out =
        run(fake_run("uninit_read", tmp.path(), "initcheck", &[]).env("FAKE_MODE", "truncate"));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    assert_eq!(stage(&report, "initcheck")["outcome"], "inconclusive");
    let count = report["findings"][0]["count"].as_u64().unwrap();
    assert!(count > 100, "records before the cut were kept: {count}");
    assert_artifacts_kept(tmp.path(), "initcheck");
}

#[test]
fn a_program_that_never_initialises_cuda_is_inconclusive_not_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run("no_cuda", tmp.path(), "memcheck", &[]).env("FAKE_MODE", "exit255"));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    assert!(
        stage(&report, "memcheck")["reason"]
            .as_str()
            .unwrap()
            .contains("never initialised CUDA")
    );
    assert_artifacts_kept(tmp.path(), "memcheck");
}

#[test]
fn a_grandchild_left_running_is_killed_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!("cudawatch-grandchild-{}", std::process::id());
    let out = run(fake_run("clean", tmp.path(), "memcheck", &[])
        .env("FAKE_MODE", "grandchild")
        .env("MARKER", &marker));
    let record = read_json(&tmp.path().join("memcheck/stage.json"));
    assert_eq!(record["left_behind"], true, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    assert!(
        stage(&report, "memcheck")["reason"]
            .as_str()
            .unwrap()
            .contains("left behind were killed")
    );
    assert_artifacts_kept(tmp.path(), "memcheck");
    // The grandchild ignored SIGTERM; it must really be gone, not only reported.
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).into_owned())
        .filter(|c| c.contains(&marker))
        .collect();
    assert!(survivors.is_empty(), "still running: {survivors:?}");
}

#[test]
fn a_missing_tool_is_inconclusive_with_a_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(cudawatch()
        .args([
            "run",
            "--stages",
            "memcheck",
            "--compute-sanitizer",
            "/nonexistent/compute-sanitizer",
            "--out-dir",
        ])
        .arg(tmp.path())
        .args(["--", "true"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    let reason = stage(&report, "memcheck")["reason"].as_str().unwrap();
    assert!(
        reason.contains("cannot start") && reason.contains("--compute-sanitizer"),
        "{reason}"
    );
}

#[test]
fn ncu_profiling_none_of_the_kernels_it_saw_is_inconclusive_though_it_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run("coalescing", tmp.path(), "ncu", &[]).env("FAKE_MODE", "no-kernels"));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    let reason = stage(&report, "ncu")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains(
            "profiled none of the kernels it saw launched (gather_coalesced, gather_strided), \
             which cudawatch's filter of PyTorch's and the libraries' kernels does not leave out"
        ),
        "{reason}"
    );
    assert_artifacts_kept(tmp.path(), "ncu");
}

#[test]
fn ncu_stage_imports_the_profile_and_reports_coalescing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run("coalescing", tmp.path(), "ncu", &[]));
    assert_eq!(
        out.code, 1,
        "78% wasted sectors is over the checklist's 50% limit: {}",
        out.stderr
    );
    let report = read_json(&tmp.path().join("report.json"));
    assert_eq!(stage(&report, "ncu")["outcome"], "findings");
    assert_eq!(report["coalescing"].as_array().unwrap().len(), 2);
    assert!(
        tmp.path().join("ncu/source-1.csv").exists(),
        "source page of the wasteful launch imported"
    );
    assert!(out.stderr.contains("wasted sectors"), "{}", out.stderr);
    let loose = run(cudawatch()
        .args(["report", "--max-wasted-sectors", "90"])
        .arg(tmp.path()));
    assert_eq!(
        loose.code, 0,
        "within a looser limit the warning alone does not fail: {}",
        loose.stderr
    );
    let item = |r: &str| {
        r.lines()
            .find(|l| l.contains("coalescing within thresholds"))
            .unwrap_or("")
            .to_string()
    };
    // `run` prints its report on stderr, `report` its product on stdout.
    assert!(item(&out.stderr).contains("fail") && item(&loose.stdout).contains("pass"));
}

/// Starts `cmd` with its output piped, for the tests that signal it.
pub(crate) fn start(cmd: &mut Command) -> std::process::Child {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Starts `cmd`, waits until the fake logged that it runs `tool`.
pub(crate) fn start_and_wait_for(cmd: &mut Command, log: &Path, tool: &str) -> std::process::Child {
    let child = start(cmd);
    wait_for_log(log, &format!("tool={tool}"));
    child
}

/// Polls `done` until it holds; fails the test after 30 s, naming `what`.
pub(crate) fn wait_until(what: &str, done: impl Fn() -> bool) {
    let mut waited = Duration::ZERO;
    while !done() {
        std::thread::sleep(Duration::from_millis(5));
        waited += Duration::from_millis(5);
        assert!(waited < Duration::from_secs(30), "{what} never happened");
    }
}

/// Waits until the fake has logged `line` (it logs each signal it gets).
pub(crate) fn wait_for_log(log: &Path, line: &str) {
    let logged = || std::fs::read_to_string(log).unwrap_or_default();
    // The log as it stood is in the failure: what the fakes did instead.
    let mut waited = Duration::ZERO;
    while !logged().contains(line) {
        std::thread::sleep(Duration::from_millis(5));
        waited += Duration::from_millis(5);
        assert!(
            waited < Duration::from_secs(30),
            "the fake logging {line:?} never happened; its log:\n{}",
            logged()
        );
    }
}

/// How many SIGINTs the fakes logged.
pub(crate) fn sigints_in(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap()
        .matches("got SIGINT")
        .count()
}

pub(crate) fn interrupt(child: &std::process::Child) {
    rustix::process::kill_process(
        rustix::process::Pid::from_child(child),
        rustix::process::Signal::INT,
    )
    .unwrap();
}

#[test]
fn a_second_ctrl_c_kills_a_tool_that_ignores_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out_dir = tmp.path().join("run");
    let mut cmd = fake_run(
        "oob_write",
        &out_dir,
        "memcheck,racecheck",
        &["--grace", "60"],
    );
    cmd.env("FAKE_MODE", "ignore-signals").env("FAKE_LOG", &log);
    let child = start_and_wait_for(&mut cmd, &log, "memcheck");
    let started = std::time::Instant::now();
    interrupt(&child);
    // The first signal was forwarded and ignored: only now is the second
    // one a second one (two signals sent at once can arrive as one).
    wait_for_log(&log, "ignored a signal");
    interrupt(&child);
    let out = finish(child);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "killed at once, not after the 60 s grace"
    );
    assert_eq!(out.code, 130, "{}", out.stderr);
    let record = read_json(&out_dir.join("memcheck/stage.json"));
    assert_eq!(record["killed"], true);
    assert_eq!(record["end"]["code"], 9);
}

#[test]
fn first_ctrl_c_is_forwarded_and_the_report_of_what_finished_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out_dir = tmp.path().join("run");
    // A grace long enough for the fake's trap to run on a loaded machine
    // (0.5 s was not, once, with two builds beside the tests: it was killed
    // before it logged the signal); it exits on SIGINT at once anyway.
    let mut cmd = fake_run(
        "oob_write",
        &out_dir,
        "plain,memcheck,racecheck",
        &["--stream", "-j", "1", "--grace", "10"],
    );
    cmd.env("FAKE_MODE", "hang").env("FAKE_LOG", &log);
    let child = start_and_wait_for(&mut cmd, &log, "memcheck");
    interrupt(&child);
    let out = finish(child);
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("got SIGINT"),
        "SIGINT forwarded to the tool"
    );
    let report = read_json(&out_dir.join("report.json"));
    assert_eq!(stage(&report, "plain")["outcome"], "clean");
    assert_eq!(stage(&report, "memcheck")["outcome"], "inconclusive");
    assert_eq!(stage(&report, "racecheck")["outcome"], "skipped");
}

#[test]
fn ctrl_c_reaches_every_stage_running_at_once_and_the_report_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out_dir = tmp.path().join("run");
    // A grace the fakes' traps outlast on a loaded machine (as above).
    let mut cmd = fake_run(
        "oob_write",
        &out_dir,
        "plain,memcheck,racecheck,initcheck",
        &["-j", "2", "--grace", "10"],
    );
    cmd.env("FAKE_MODE", "hang").env("FAKE_LOG", &log);
    let child = start_and_wait_for(&mut cmd, &log, "racecheck");
    wait_until("both stages running", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.matches("pid ").count() == 2)
    });
    interrupt(&child);
    let out = finish(child);
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert_eq!(sigints_in(&log), 2, "SIGINT forwarded to both tools");
    let report = read_json(&out_dir.join("report.json"));
    assert_eq!(stage(&report, "plain")["outcome"], "clean");
    assert_eq!(stage(&report, "memcheck")["outcome"], "inconclusive");
    assert_eq!(stage(&report, "racecheck")["outcome"], "inconclusive");
    assert_eq!(
        stage(&report, "initcheck")["outcome"],
        "skipped",
        "nothing starts after Ctrl-C"
    );
}

#[test]
fn fail_on_warning_makes_uncoalesced_access_fail_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "coalescing",
        tmp.path(),
        "ncu",
        &["--fail-on", "warning"],
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let again = run(cudawatch()
        .args(["report", "--fail-on", "never"])
        .arg(tmp.path()));
    assert_eq!(
        again.code, 0,
        "the saved run re-judged with another policy: {}",
        again.stderr
    );
}

#[test]
fn a_sanitizer_suppression_xml_is_passed_to_every_sanitizer_stage() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let supp = tmp.path().join("supp.xml");
    std::fs::write(&supp, "<suppressions/>").unwrap();
    let out = run(fake_run(
        "clean",
        &tmp.path().join("run"),
        "memcheck,racecheck",
        &["--sanitizer-suppressions", supp.to_str().unwrap()],
    )
    .env("FAKE_LOG", &log));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        logged
            .matches(&format!("--suppressions {}", supp.display()))
            .count(),
        2,
        "{logged}"
    );
}

#[test]
fn unselected_stages_are_skipped_in_the_checklist_and_do_not_fail_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let junit = tmp.path().join("junit.xml");
    let out = run(fake_run(
        "clean",
        &tmp.path().join("run"),
        "plain,memcheck",
        &["--report", &format!("junit={}", junit.display())],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let suite = xml
        .lines()
        .find(|l| l.contains("name=\"cudawatch.checklist\""))
        .unwrap();
    // racecheck, initcheck, synccheck, csan, memory, oom-recovery and coalescing were
    // not selected; the headroom could not be measured without a GPU: that
    // one is an error.
    assert!(
        suite.contains("failures=\"0\" errors=\"1\" skipped=\"7\""),
        "{suite}"
    );
    assert!(xml.contains("<error message=\"the program&apos;s GPU memory was never sampled"));
    assert!(xml.contains("<skipped message=\"its stage was not selected (--stages)\"/>"));
    assert!(
        out.stderr
            .contains("CLEAN: no errors found; not checked: GPU memory headroom"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_sanitizer_stopped_by_its_timeout_is_incomplete_and_keeps_what_it_found() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(
        fake_run("oob_write", tmp.path(), "memcheck", &["--timeout", "2"])
            .env("FAKE_MODE", "hang-after-records"),
    );
    assert_eq!(out.code, 3, "never clean: {}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    let reason = stage(&report, "memcheck")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.starts_with("incomplete: stopped by its timeout after 2s")
            && reason.contains("found before the stop kept"),
        "{reason}"
    );
    assert_eq!(
        report["findings"][0]["kind"], "invalid_access",
        "never nothing"
    );
    assert_artifacts_kept(tmp.path(), "memcheck");
}

#[test]
fn the_sanitizers_cost_levers_are_passed_to_every_sanitizer_stage() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out = run(fake_run(
        "clean",
        &tmp.path().join("run"),
        "memcheck,racecheck",
        &[
            "--sanitizer-launch-count",
            "5",
            "--sanitizer-launch-skip",
            "2",
            "--sanitizer-kernel",
            "kns=gemm",
        ],
    )
    .env("FAKE_LOG", &log));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let logged = std::fs::read_to_string(&log).unwrap();
    for flag in [
        "--launch-count 5",
        "--launch-skip 2",
        "--kernel-name kns=gemm",
    ] {
        assert_eq!(logged.matches(flag).count(), 2, "{flag}: {logged}");
    }
    let report = read_json(&tmp.path().join("run/report.json"));
    assert!(
        stage(&report, "memcheck")["reason"]
            .as_str()
            .unwrap()
            .contains("only the launches selected by --launch-count 5"),
        "a clean stage says what it vouches for"
    );
}

#[test]
fn racecheck_told_to_analyse_the_first_block_says_a_clean_stage_covered_only_that() {
    // --racecheck-blocks first: compute-sanitizer 2026.4's racecheck on
    // ResNet-18's step took 29 s instead of 64 s (the H100, this option
    // passed by hand); a clean stage must not read as a full check.
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out = run(fake_run(
        "clean",
        &tmp.path().join("run"),
        "memcheck,racecheck",
        &["--racecheck-blocks", "first"],
    )
    .env("FAKE_LOG", &log));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let logged = std::fs::read_to_string(&log).unwrap();
    // racecheck's option, for racecheck only.
    assert_eq!(
        logged.matches("--racecheck-filter-cluster-id 0").count(),
        1,
        "{logged}"
    );
    let report = read_json(&tmp.path().join("run/report.json"));
    let racecheck = stage(&report, "racecheck");
    assert_eq!(racecheck["outcome"], "clean", "{racecheck}");
    assert!(
        racecheck["reason"]
            .as_str()
            .unwrap()
            .contains("only block (cluster) 0 of each launch analysed"),
        "{racecheck}"
    );
    assert!(
        !stage(&report, "memcheck")["reason"]
            .as_str()
            .unwrap()
            .contains("block"),
        "memcheck checked every block"
    );
    assert!(
        report["notes"]
            .to_string()
            .contains("racecheck analysed block (cluster) 0 of each launch only"),
        "{}",
        report["notes"]
    );
}

#[test]
fn racecheck_blocks_first_on_a_sanitizer_without_it_says_which_release_it_needs() {
    // The H100's compute-sanitizer 2025.3.1 printed its usage for
    // --racecheck-filter-cluster-id; the stage said only "rejected its
    // arguments", and the notes still said block 0 had been analysed.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "clean",
        &tmp.path().join("run"),
        "racecheck",
        &["--racecheck-blocks", "first"],
    )
    .env("FAKE_MODE", "before-2026.3"));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = read_json(&tmp.path().join("run/report.json"));
    let reason = stage(&report, "racecheck")["reason"].to_string();
    assert!(
        reason.contains("--racecheck-blocks first needs compute-sanitizer 2026.3 or newer")
            && reason.contains("--compute-sanitizer PATH"),
        "{reason}"
    );
    assert!(
        !report["notes"].to_string().contains("analysed block"),
        "nothing was analysed: {}",
        report["notes"]
    );
}

#[test]
fn racecheck_crashing_in_launches_it_was_told_to_skip_says_to_check_every_launch() {
    // The real H100 capture: ResNet-18's step under racecheck with
    // --launch-skip; cuDNN's unchecked kernels faulted, the tool could not
    // handle it and aborted the program, exiting 86 ("errors found") with
    // "1 hazard displayed" for its own internal error.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "beyond/launch_ranges",
        &tmp.path().join("run"),
        "plain,racecheck",
        &["--sanitizer-launch-skip", "138"],
    )
    .env("FAKE_RUN", "racecheck-skip-all"));
    assert_eq!(out.code, 3, "inconclusive, never clean: {}", out.stderr);
    let report = read_json(&tmp.path().join("run/report.json"));
    let racecheck = stage(&report, "racecheck");
    assert_eq!(racecheck["outcome"], "inconclusive");
    let reason = racecheck["reason"].as_str().unwrap();
    for said in [
        "crashed under the tool",
        "--launch-skip 138",
        "checked only up to the crash",
        "leave out --sanitizer-launch-skip",
    ] {
        assert!(reason.contains(said), "{said}: {reason}");
    }
    assert!(
        report["findings"].as_array().unwrap().is_empty(),
        "the tool's internal error is not a hazard of the program: {}",
        report["findings"]
    );
}

#[test]
fn initchecks_reads_of_what_a_skipped_launch_wrote_are_doubted_not_gating() {
    // The real H100 capture: a correct program whose first kernel fills
    // the buffer its second reads, under initcheck with --launch-skip 1:
    // 4096 "uninitialised" reads at the user's line. Before, the gate
    // failed on them.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "beyond/fill_then_read",
        &tmp.path().join("run"),
        "plain,initcheck",
        &["--sanitizer-launch-skip", "1", "--format", "json"],
    )
    .env("FAKE_RUN", "initcheck-skip1"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The judged report (the run directory's is written before judging).
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        stage(&report, "initcheck")["unchecked_launches"],
        serde_json::json!(["--launch-skip 1"])
    );
    let site = &report["findings"][0];
    assert_eq!(site["count"], 4096);
    assert_eq!(site["severity"], "warning", "{site}");
    let doubt = site["doubt"].as_str().unwrap();
    assert!(
        doubt.contains("told not to check some launches (--launch-skip 1)"),
        "{doubt}"
    );
    // Still listed where the user looks, and gating when asked.
    assert!(
        out.stderr.contains("fill_then_read.cu:14"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("told not to check"), "{}", out.stderr);
    let strict = run(fake_run(
        "beyond/fill_then_read",
        &tmp.path().join("strict"),
        "plain,initcheck",
        &["--sanitizer-launch-skip", "1", "--fail-on", "warning"],
    )
    .env("FAKE_RUN", "initcheck-skip1"));
    assert_eq!(strict.code, 1, "{}", strict.stderr);
}

#[test]
fn a_python_program_that_crashes_after_its_output_under_the_leak_check_is_not_clean() {
    // The real H100 capture: --leak-check full, all output printed, the
    // summary printed, then the interpreter crashed (exit 7). This was
    // once clean ("crashed at teardown"), but a crash in late work that
    // prints nothing looks exactly the same: the stage vouches for nothing
    // and says how to avoid the teardown crash.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "torch_train_clean",
        tmp.path(),
        "plain,memcheck",
        &["--leak-check", "full"],
    )
    .env("FAKE_RUN", "memcheck-leakcheck"));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    let memcheck = stage(&report, "memcheck");
    assert_eq!(memcheck["outcome"], "inconclusive", "{memcheck}");
    let reason = memcheck["reason"].as_str().unwrap();
    assert!(
        reason.contains("cannot be told") && reason.contains("--leak-check auto"),
        "{memcheck}"
    );
    let judged = run(cudawatch()
        .arg("report")
        .arg(tmp.path())
        .args(["--format", "json"]));
    let leaks = json(&judged)["checklist"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "no_leaks")
        .unwrap()
        .clone();
    assert_eq!(leaks["status"], "inconclusive", "{leaks}");
}

#[test]
fn a_crash_in_the_middle_under_the_tool_stays_inconclusive() {
    // The same capture, but nothing proves the program got to its end (no
    // plain run to compare its output with).
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = fake_run(
        "torch_train_clean",
        tmp.path(),
        "memcheck",
        &["--leak-check", "full"],
    );
    cmd.env("FAKE_RUN", "memcheck-leakcheck");
    let out = run(cmd);
    assert_eq!(
        out.code, 3,
        "no plain run to prove the output complete: {}",
        out.stderr
    );
    let report = read_json(&tmp.path().join("report.json"));
    assert!(
        stage(&report, "memcheck")["reason"]
            .as_str()
            .unwrap()
            .contains("checked only up to the crash")
    );
}

#[test]
fn a_ctrl_c_during_the_ncu_imports_stops_the_remaining_imports() {
    // Before: each remaining import still ran, up to 300 s each.
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out_dir = tmp.path().join("run");
    let mut cmd = fake_run("coalescing", &out_dir, "ncu", &[]);
    cmd.env("FAKE_IMPORT", "hang").env("FAKE_LOG", &log);
    let child = start(&mut cmd);
    wait_for_log(&log, "ncu import page=raw");
    let started = std::time::Instant::now();
    interrupt(&child);
    let out = finish(child);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 130, "{}", out.stderr);
    // The raw and details pages and the call stacks are imported at once;
    // the source pages, which come after them, never start.
    let imports = std::fs::read_to_string(&log).unwrap();
    assert!(imports.matches("ncu import").count() <= 3, "{imports}");
    assert!(!imports.contains("page=source"), "{imports}");
    assert_eq!(read_json(&out_dir.join("run.json"))["interrupted"], true);
    // Read later, the stopped run is one that did not check everything: a
    // CI step that renders it is not itself cancelled (before: 130).
    let later = run(cudawatch().arg("report").arg(&out_dir));
    assert_eq!(later.code, 3, "{}", later.stdout);
    assert!(
        later.stdout.contains("the run was stopped"),
        "{}",
        later.stdout
    );
}

#[test]
fn ncus_source_pages_start_when_the_raw_page_is_read_not_after_the_call_stacks() {
    // The call stacks' text import is the slowest (4.4 s for ResNet-18's
    // 90 launches on the H100); the source pages need only the raw page.
    // Before, they waited for every import that started with the raw one.
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out_dir = tmp.path().join("run");
    let mut cmd = fake_run("coalescing", &out_dir, "plain,ncu", &[]);
    cmd.env("FAKE_STACKS_SLOW", "3").env("FAKE_LOG", &log);
    let out = run(cmd);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let imports = std::fs::read_to_string(&log).unwrap();
    let source = imports.find("page=source").expect("source pages imported");
    let stacks_done = imports
        .find("ncu import done page=details text")
        .expect("the stacks' import ended");
    assert!(source < stacks_done, "{imports}");
    // And the report still has what each import brought: per-line
    // figures from the source pages, every import recorded as ended well.
    let report = read_json(&out_dir.join("report.json"));
    let ncu = stage(&report, "ncu");
    assert_eq!(ncu["outcome"], "findings", "{ncu}");
    let record = read_json(&out_dir.join("ncu/stage.json"));
    let ended: Vec<String> = record["imports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[0].as_str().unwrap().to_string())
        .collect();
    assert!(
        ended.iter().any(|n| n.starts_with("source-"))
            && ended.iter().any(|n| n.starts_with("stacks-"))
            && ended.contains(&"raw.csv".to_string()),
        "{ended:?}"
    );
    assert!(
        report["findings"].to_string().contains("\"line\":12"),
        "the strided gather's line from its source page"
    );
}

/// A copy of a captured case whose memcheck XML repeats its records up to
/// about `bytes`: reading it in takes a while, which is the window the
/// signal tests below need.
fn slow_to_read_case(case: &str, bytes: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(sample(case)).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    let xml = std::fs::read_to_string(sample(case).join("memcheck.xml")).unwrap();
    let (start, end) = (
        xml.find("<record>").unwrap(),
        xml.rfind("</record>").unwrap() + 9,
    );
    let mut big = String::with_capacity(bytes + xml.len());
    big.push_str(&xml[..start]);
    while big.len() < bytes {
        big.push_str(&xml[start..end]);
    }
    big.push_str(&xml[end..]);
    std::fs::write(dir.path().join("memcheck.xml"), big).unwrap();
    dir
}

#[test]
fn a_ctrl_c_while_a_stage_is_read_in_stops_before_the_next_stage() {
    // Before: the signal waited for the next stage's loop, which started
    // racecheck and then interrupted it.
    let case = slow_to_read_case("oob_write", 40 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let log = tmp.path().join("fake.log");
    let mut cmd = fake_run("oob_write", &out_dir, "memcheck,racecheck", &["-j", "1"]);
    cmd.env("FAKE_CASE", case.path()).env("FAKE_LOG", &log);
    let child = start(&mut cmd);
    // stage.json is written as the stage ends, before its XML is read in.
    let record = out_dir.join("memcheck/stage.json");
    wait_until("memcheck finishing", || record.exists());
    interrupt(&child);
    let out = finish(child);
    assert_eq!(out.code, 130, "{}", out.stderr);
    let report = read_json(&out_dir.join("report.json"));
    assert_eq!(stage(&report, "memcheck")["outcome"], "findings");
    assert_eq!(
        stage(&report, "racecheck")["outcome"],
        "skipped",
        "never started"
    );
    assert!(
        !std::fs::read_to_string(&log)
            .unwrap()
            .contains("tool=racecheck")
    );
}

#[test]
fn a_second_ctrl_c_while_a_stage_is_read_in_exits_at_once() {
    let case = slow_to_read_case("oob_write", 80 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let mut cmd = fake_run("oob_write", &out_dir, "memcheck,racecheck", &[]);
    cmd.env("FAKE_CASE", case.path());
    let child = start(&mut cmd);
    let record = out_dir.join("memcheck/stage.json");
    wait_until("memcheck finishing", || record.exists());
    interrupt(&child);
    std::thread::sleep(Duration::from_millis(50));
    let started = std::time::Instant::now();
    interrupt(&child);
    let out = finish(child);
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "exited {:?} after the second signal, not at once",
        started.elapsed()
    );
}

#[test]
fn a_daemon_the_program_leaves_behind_is_killed_and_reported() {
    // Before: a setsid'd grandchild outlived the run, which said clean.
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!("cudawatch-daemon-{}", std::process::id());
    let out = run(fake_run("clean", tmp.path(), "memcheck", &[])
        .env("FAKE_MODE", "daemon")
        .env("MARKER", &marker));
    let report = read_json(&tmp.path().join("report.json"));
    assert!(
        stage(&report, "memcheck")["reason"]
            .as_str()
            .unwrap()
            .contains("left behind were killed"),
        "{}",
        out.stderr
    );
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).into_owned())
        .filter(|c| c.contains(&marker))
        .collect();
    assert!(survivors.is_empty(), "still running: {survivors:?}");
}

#[test]
fn turning_pytorchs_allocator_off_is_a_note_and_a_clean_run_says_clean_without_a_warning() {
    // Every PyTorch program runs its sanitizers with the caching allocator
    // off (it hides out-of-bounds accesses inside its blocks). That is what
    // cudawatch did, not a limit on the report: a clean run must not read
    // "with 1 warning" for it, and the reader still learns it was done.
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = crate::helpers::with_fake_torch(tmp.path(), "print('step done')\n");
    let out = run(cmd
        .env("FAKE_CASE", sample("torch_train_clean"))
        // The capture made with the stage's own flags.
        .env("FAKE_RUN", "memcheck-noleak")
        .args(["--color", "never", "run", "--stages", "plain,memcheck"])
        .arg("--out-dir")
        .arg(tmp.path().join("run"))
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .args(["--format", "json", "--", "python3", "prog.py"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    assert_eq!(stage(&report, "memcheck")["outcome"], "clean", "{report}");
    assert!(
        stage(&report, "memcheck")["env"]
            .to_string()
            .contains("PYTORCH_NO_CUDA_MEMORY_CACHING=1"),
        "{report}"
    );
    assert!(report.get("warnings").is_none(), "{report}");
    assert!(
        report["notes"][0]["message"]
            .as_str()
            .unwrap()
            .contains("caching allocator was turned off"),
        "{report}"
    );
    let verdict = report["verdict"][0]["text"].as_str().unwrap();
    assert!(
        verdict.starts_with("no errors found") && !verdict.contains("warning"),
        "{verdict}"
    );
    // The terminal lists it under Notes, not Warnings.
    assert!(
        out.stderr.contains("\nNotes\n") && !out.stderr.contains("\nWarnings\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn cuda_graphs_that_need_the_caching_allocator_are_checked_again_with_it_on() {
    // torch.compile(mode="reduce-overhead") on the H100: with
    // PYTORCH_NO_CUDA_MEMORY_CACHING=1, as the sanitizers run Python
    // programs, Inductor's CUDA graphs fail ("These storage data ptrs are
    // not allocated in pool (0, 1)", sample-reports/beyond/many_processes);
    // with the allocator on, the tool's host call stacks fail them too
    // ("in the cudagraph pool not tracked as outputs",
    // sample-reports/beyond/cudagraph_stacks). Every sanitizer stage was
    // inconclusive for settings of ours.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(cudawatch()
        .env("FAKE_CASE", sample("clean"))
        .env("FAKE_NOCACHE_CASE", sample("beyond/many_processes"))
        .env("FAKE_GRAPHS_CASE", sample("beyond/cudagraph_stacks"))
        .args([
            "run",
            "--stages",
            "plain,memcheck,racecheck,initcheck",
            "--format",
            "json",
        ])
        .args(["--out-dir", dir.to_str().unwrap()])
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .args(["--", "python3", "-c", "print('total 1.0')"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    let memcheck = stage(&report, "memcheck").clone();
    assert_eq!(memcheck["outcome"], "clean", "{memcheck}");
    assert!(
        !memcheck["env"]
            .to_string()
            .contains("PYTORCH_NO_CUDA_MEMORY_CACHING"),
        "{memcheck}"
    );
    let record = read_json(&dir.join("memcheck/stage.json"));
    let command = record["command"].to_string();
    assert!(
        command.contains(r#""--show-backtrace","device""#),
        "{command}"
    );
    let notes = record["notes"].to_string();
    assert!(
        notes.contains(
            "the program's CUDA graphs failed without PyTorch's caching allocator, which the \
             sanitizer stages turn off (it printed \\\"not allocated in pool\\\"): run again \
             with the allocator on and without host call stacks"
        ) && notes.contains("records name no launching line")
            && notes.contains("cudagraphs/"),
        "{notes}"
    );
    // The first try is kept, with how it ended.
    let first = read_json(&dir.join("cudagraphs/memcheck/stage.json"));
    assert_eq!(first["end"]["code"], 1, "{first}");
    // initcheck unwinds no host stack already: only the allocator changes.
    let initcheck = stage(&report, "initcheck").clone();
    assert_eq!(initcheck["outcome"], "clean", "{initcheck}");
    let notes = read_json(&dir.join("initcheck/stage.json"))["notes"].to_string();
    assert!(
        notes.contains("run again with the allocator on;") && !notes.contains("launching line"),
        "{notes}"
    );
    assert_eq!(stage(&report, "racecheck")["outcome"], "clean");
    assert!(
        out.stderr.contains(
            "running again with PyTorch's caching allocator on and without host call stacks"
        ),
        "{}",
        out.stderr
    );
    // Said once for the two stages it is true of, and counted once.
    assert!(
        out.stderr
            .contains("  - memcheck, racecheck: the program's CUDA graphs failed"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("no errors found, with 2 warnings"),
        "{}",
        out.stderr
    );
}

#[test]
fn cuda_graphs_that_python_call_stacks_fail_are_profiled_again_without_them() {
    // Under ncu's Python call stacks Inductor's CUDA graphs fail after 9
    // launches (sample-reports/beyond/cudagraph_stacks/ncu-python.*),
    // which left the coalescing table cut short and the stage inconclusive;
    // without them the same program ends as its plain run does.
    let case = sample("beyond/pytest_model_ok");
    let ncu_run = |graphs: bool, dir: &std::path::Path| {
        let mut cmd = cudawatch();
        cmd.env("FAKE_CASE", &case);
        if graphs {
            cmd.env("FAKE_GRAPHS_CASE", sample("beyond/cudagraph_stacks"));
        }
        run(cmd
            .args(["run", "--stages", "plain,ncu", "--format", "json"])
            .args(["--out-dir", dir.to_str().unwrap()])
            .arg("--ncu")
            .arg(root().join("tests/fakes/ncu"))
            .args(["--", "python3", "-c", "print('total 1.0')"]))
    };
    let tmp = tempfile::tempdir().unwrap();
    let (failing, plain) = (tmp.path().join("graphs"), tmp.path().join("plain"));
    let out = ncu_run(true, &failing);
    let without = ncu_run(false, &plain);
    let ncu = stage(&json(&out), "ncu").clone();
    let expected = stage(&json(&without), "ncu").clone();
    assert_eq!(out.code, without.code, "{}", out.stderr);
    assert_eq!(ncu["outcome"], expected["outcome"], "{ncu}");
    assert_eq!(ncu["reason"], expected["reason"], "{ncu}");
    let record = read_json(&failing.join("ncu/stage.json"));
    assert!(
        !record["command"].to_string().contains("--call-stack"),
        "{record}"
    );
    let notes = record["notes"].to_string();
    assert!(
        notes.contains("failed under ncu's Python call stacks")
            && notes.contains("launches name no launching line")
            && notes.contains("cudagraphs/"),
        "{notes}"
    );
    let first = read_json(&failing.join("cudagraphs/ncu/stage.json"));
    assert_eq!(first["end"]["code"], 1, "{first}");
}

#[test]
fn a_graph_captured_by_hand_is_checked_again_with_the_allocator_on_not_reported_as_api_errors() {
    // torch.cuda.graph on the H100 with the caching allocator off, as the
    // sanitizer stages run Python: the capture's first tensor is a
    // cudaMalloc while the stream captures, which CUDA refuses; memcheck
    // reported four API errors and a correct program FAILED
    // (sample-reports/beyond/manual_graphs/memcheck-nocache.*).
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(cudawatch()
        .env("FAKE_CASE", sample("clean"))
        .env("FAKE_NOCACHE_CASE", sample("beyond/manual_graphs"))
        .args(["run", "--stages", "plain,memcheck", "--format", "json"])
        .args(["--out-dir", dir.to_str().unwrap()])
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .args(["--", "python3", "-c", "print('loss 1.0')"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    assert_eq!(stage(&report, "memcheck")["outcome"], "clean");
    assert!(
        report["findings"].as_array().unwrap().is_empty(),
        "{report}"
    );
    let record = read_json(&dir.join("memcheck/stage.json"));
    // Host stacks stay: they do not fail a capture by hand, and they give
    // a finding its launching line.
    assert!(
        !record["command"].to_string().contains("--show-backtrace"),
        "{record}"
    );
    let notes = record["notes"].to_string();
    assert!(
        notes.contains("operation not permitted when stream is capturing")
            && notes.contains("run again with the allocator on;"),
        "{notes}"
    );
    // The refused first try is kept, its API errors with it.
    let first = read_json(&dir.join("cudagraphs/memcheck/stage.json"));
    assert_eq!(first["end"]["code"], 86, "{first}");
}

#[test]
fn an_out_of_memory_plain_run_is_answered_without_the_slow_tools_meeting_it_again() {
    // The plain run fails with PyTorch's out-of-memory error at the user's
    // line; the sanitizers and ncu would only meet the same error, minutes
    // later (a GPT-2 step: 4 min 16 s, exit 3 when racecheck was cut by its
    // limit). They are not run: the verdict leads with the OOM, exit 1.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let log = tmp.path().join("tools.log");
    let started = std::time::Instant::now();
    let out = run(
        fake_run("torch_oom", &out_dir, "plain,memcheck,racecheck,ncu", &[])
            .env("FAKE_SLEEP", "30")
            .env("FAKE_LOG", &log),
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    // Each fake tool takes 30 s: the answer came in the plain run's time
    // (about a second here), not the tools'.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let report = read_json(&out_dir.join("report.json"));
    for tool in ["memcheck", "racecheck", "ncu"] {
        let s = stage(&report, tool);
        assert_eq!(s["outcome"], "skipped", "{tool}: {s}");
        assert!(
            s["reason"]
                .as_str()
                .unwrap()
                .contains("blocked by the plain run's out-of-memory error at"),
            "{tool}: {s}"
        );
    }
    let verdict = report.to_string();
    assert!(!verdict.contains("inconclusive: memcheck"), "{verdict}");
    // No tool ran to completion: at most a start beside the plain run,
    // stopped once the plain run said out of memory.
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!calls.contains("replaying"), "{calls}");
    assert!(
        out.stderr
            .contains("FINDINGS: root cause: plain out_of_memory"),
        "{}",
        out.stderr
    );
}

#[test]
fn on_a_60_column_terminal_a_line_said_beside_the_spinners_breaks_at_words() {
    // Before: a stage's note printed above the live spinners went out as
    // one line, and the terminal broke it mid-word ("kernel-lev|el").
    // `script` gives the run a terminal of 60 columns, as a user's is.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let case = sample("beyond/retry_loop");
    let quote = |p: &Path| format!("'{}'", p.display());
    let program = format!(
        "cat {0}/plain.stdout; cat {0}/plain.stderr >&2; exit 0",
        case.display()
    );
    let command = format!(
        "stty rows 40 cols 60; exec {} run --out-dir {} --stages plain,memcheck --loop-seconds 2 \
         --timeout 120 --grace 0.5 --compute-sanitizer {} -- sh -c \"{program}\"",
        quote(Path::new(env!("CARGO_BIN_EXE_cudawatch"))),
        quote(&out_dir),
        quote(&root().join("tests/fakes/compute-sanitizer")),
    );
    let cudawatch = cudawatch();
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &command, "/dev/null"]);
    for (name, value) in cudawatch.get_envs() {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
    cmd.env("FAKE_MODE", "loop").env("FAKE_CASE", &case);
    let out = run(cmd);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let ansi = regex::Regex::new("\x1b\\[[0-9;?]*[A-Za-z]").unwrap();
    let shown = ansi.replace_all(&out.stdout, "");
    // The rows the terminal shows: each line as written, without the
    // spinner drawn after it (it starts with a braille dot), wrapped at 60
    // columns as the terminal wraps it.
    let rows: Vec<String> = shown
        .split(['\r', '\n'])
        .map(|l| {
            l.split(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
                .next()
                .unwrap_or("")
        })
        .flat_map(|l| {
            let chars: Vec<char> = l.chars().collect();
            chars
                .chunks(60)
                .map(|row| row.iter().collect::<String>().trim_end().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|row| !row.is_empty())
        .collect();
    // The progress line's rows, up to the stage's end (the report after
    // it says the same again, wrapped by cudawatch).
    let first = rows
        .iter()
        .position(|r| r.starts_with("(2/2) memcheck: repeated"))
        .unwrap_or_else(|| panic!("{rows:#?}"));
    let last = rows
        .iter()
        .position(|r| r.starts_with("(2/2) memcheck findings"))
        .unwrap_or_else(|| panic!("{rows:#?}"));
    let rows = &rows[first..last];
    let said = "repeated the same errors under kernel-level recovery, nothing new among them (the \
                program never saw its kernels fail, and kept going): stopped after 2s, running \
                again where the first error ends the checking";
    for word in said.split(' ') {
        assert!(
            rows.iter().any(|row| row.split(' ').any(|w| w == word)),
            "{word:?} broken: {rows:#?}"
        );
    }
}

#[test]
fn a_loop_kept_alive_by_kernel_level_recovery_is_stopped_and_checked_the_tools_way() {
    // tests/gpu/beyond/retry_until_done.cu retries a pass until its kernel
    // handles every item; the kernel reads past its buffer. Under
    // kernel-level recovery the tool ends the kernel at each fault and the
    // program, never told, retries forever (the stage ran to its limit);
    // under the tool's default the first error ends it in a second. The
    // repeat watch stops the loop and the stage runs again the tool's way.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let started = std::time::Instant::now();
    let out = run(fake_run(
        "beyond/retry_loop",
        &out_dir,
        "plain,memcheck",
        &["--loop-seconds", "2", "--timeout", "120"],
    )
    .env("FAKE_MODE", "loop"));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let report = read_json(&out_dir.join("report.json"));
    let memcheck = stage(&report, "memcheck");
    assert_eq!(memcheck["outcome"], "findings", "{memcheck}");
    assert!(!memcheck["timed_out"].as_bool().unwrap_or(false));
    // The second try ran without kernel-level recovery.
    let command = memcheck["command"].to_string();
    assert!(!command.contains("--destroy-on-device-error"), "{command}");
    // The looping try is kept, and the warning says what happened.
    assert!(out_dir.join("looped/memcheck/stage.json").exists());
    assert!(
        out.stderr
            .contains("repeated the same errors under kernel-level recovery"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "root cause: memcheck invalid_access at {}",
            captured("tests/gpu/beyond/retry_until_done.cu:17")
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn an_out_of_memory_error_the_program_recovered_from_blocks_no_stage() {
    // A batch-size finder catches PyTorch's OOM on purpose and exits 0: the
    // error it printed blocked every sanitizer, which never ran.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let dir = sample("torch_oom");
    let mut cmd = cudawatch();
    cmd.env("FAKE_CASE", sample("clean"))
        .args(["run", "--out-dir", out_dir.to_str().unwrap()])
        .args(["--stages", "plain,memcheck,racecheck", "--grace", "0.5"])
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "cat '{0}/plain.stderr' >&2; echo 'batch 512 did not fit: trying 256'; exit 0",
            dir.display()
        ));
    let out = run(cmd);
    let report = read_json(&out_dir.join("report.json"));
    for tool in ["memcheck", "racecheck"] {
        let s = stage(&report, tool);
        assert!(
            !s["reason"].as_str().unwrap().contains("blocked by"),
            "{tool}: {s}"
        );
        assert!(s["end"].is_object(), "{tool} ran: {s}");
    }
    assert_ne!(
        out.code, 0,
        "the OOM it printed is still a finding: {}",
        out.stderr
    );
}

#[test]
fn a_stage_dies_with_a_cudawatch_that_was_sigkilled() {
    // docs/untrusted-input.md: each stage's process gets PR_SET_PDEATHSIG
    // SIGKILL, so a SIGKILLed `cudawatch run` (the OOM killer, a CI
    // runner's cancel) leaves no hour-long stage behind.
    let tmp = tempfile::tempdir().unwrap();
    let pidfile = tmp.path().join("stage.pid");
    let mut cudawatch = cudawatch()
        .args(["run", "--stages", "plain", "--out-dir"])
        .arg(tmp.path().join("run"))
        .args(["--", "sh", "-c"])
        .arg(format!("echo $$ > '{}'; exec sleep 300", pidfile.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the stage never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    cudawatch.kill().unwrap();
    cudawatch.wait().unwrap();
    // Gone, or a zombie waiting for init to reap it.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|s| !s.trim_start().starts_with('Z'))
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive(), "the stage (pid {pid}) outlived cudawatch");
}
