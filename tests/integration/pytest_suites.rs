//! A CI job's `cudawatch run -- python -m pytest`: pytest prints its
//! failures in its own format, not Python's tracebacks, and keeps going
//! after the first, so every later test fails with the same sticky CUDA
//! error. Replayed from the H100's captures in
//! sample-reports/beyond/pytest_* (`scripts/capture-beyond.sh OUT
//! pytest-formats`).

use crate::helpers::{cudawatch, json, run, sample, site_of_kind};
use crate::run::fake_run;

/// The plain stage of `case` replayed, as `cudawatch run --format json`.
fn plain_run(case: &str) -> (i32, serde_json::Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        case,
        &tmp.path().join("run"),
        "plain",
        &["--format", "json"],
    ));
    (out.code, json(&out), out.stderr)
}

#[test]
fn a_device_assert_in_a_test_names_that_tests_line_in_every_traceback_style() {
    // test_lookup trips the assert at test_lookup.py:26; test_sum_after,
    // later, fails at :31 only because the context is gone.
    for style in ["default", "tb-short", "tb-native", "quiet", "xdist"] {
        let (code, report, stderr) = plain_run(&format!("beyond/pytest_formats/{style}"));
        assert_eq!(code, 1, "{style}: {stderr}");
        for kind in ["device_assert", "cuda_error"] {
            let frame = &site_of_kind(&report, kind)["python_frame"];
            assert!(
                frame["file"].as_str().unwrap().ends_with("test_lookup.py")
                    && frame["line"] == 26
                    && frame["func"] == "test_lookup",
                "{style} {kind}: {frame}"
            );
        }
        let verdict = stderr.lines().find(|l| l.starts_with("FINDINGS:")).unwrap();
        assert!(
            verdict.starts_with("FINDINGS: root cause: plain device_assert")
                && verdict.contains("(launched from ")
                // As pytest's style named the file: from the project's root
                // when the traceback gave its whole path.
                && verdict.contains("test_lookup.py:26)"),
            "{style}: {verdict}"
        );
    }
}

#[test]
fn one_line_tracebacks_name_no_line_rather_than_the_later_tests() {
    // `--tb=line` keeps only the raising frame: inside torch for the test
    // that tripped the assert. The later test's own line is not its cause.
    let (code, report, stderr) = plain_run("beyond/pytest_formats/tb-line");
    assert_eq!(code, 1, "{stderr}");
    for site in report["findings"].as_array().unwrap() {
        assert!(
            site["python_frame"].is_null(),
            "no user frame is known: {site}"
        );
    }
}

#[test]
fn tests_failing_without_a_cuda_error_are_each_a_finding_at_their_line() {
    let (code, report, stderr) = plain_run("beyond/pytest_failures");
    assert_eq!(code, 1, "{stderr}");
    let found: Vec<(String, String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["kind"], "python_exception", "{s}");
            assert!(
                s["location"]["file"]
                    .as_str()
                    .unwrap()
                    .ends_with("test_numerics.py"),
                "{s}"
            );
            (
                s["message"].as_str().unwrap().to_string(),
                s["python_frame"]["func"].as_str().unwrap().to_string(),
                s["location"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        (
            "FileNotFoundError: weights.pt: run the download step first",
            "checkpoint",
            10,
        ),
        (
            "AssertionError: assert False",
            "test_fp16_matmul_matches_cpu",
            17,
        ),
    ];
    for (message, func, line) in expected {
        assert!(
            found
                .iter()
                .any(|f| f.0 == message && f.1 == func && f.2 == line),
            "{message} in {func} at {line}: {found:?}"
        );
    }
    assert_eq!(found.len(), 2, "{found:?}");
}

#[test]
fn a_stream_race_reported_inside_a_test_is_at_the_users_helper() {
    // CSAN's report is in pytest's "Captured stderr call" part, on stdout.
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(sample("beyond/pytest_stream_race").join("csan.stdout")));
    let report = json(&out);
    let race = site_of_kind(&report, "stream_race");
    assert!(
        race["location"]["file"]
            .as_str()
            .unwrap()
            .ends_with("pytest_stream_race/loader.py")
            && race["location"]["line"] == 14,
        "{race}"
    );
}

#[test]
fn a_correct_suite_is_clean_though_a_reduction_it_launches_wastes_a_few_sectors() {
    // ATen's Welford reduction, launched from the user's own helper
    // (prefetch.py:16), moves 24 sectors beyond the ideal of 16,497. ncu's
    // rule would call that uncoalesced ("0% of the total"), a warning at
    // the user's line of a correct suite.
    let dir = sample("beyond/pytest_model_ok");
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(dir.join("ncu-raw.stdout"))
        .arg(dir.join("ncu-details.stdout")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    let welford = report["coalescing"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kernel"].as_str().unwrap().contains("WelfordOps"))
        .expect("the launch stays in the coalescing table");
    assert_eq!(welford["excessive_sectors"], 24.0, "{welford}");
    for site in report["findings"].as_array().unwrap() {
        assert!(
            !site["kernel"]
                .as_str()
                .is_some_and(|k| k.contains("WelfordOps")),
            "{site}"
        );
        assert_ne!(site["owner"]["owner"], "user", "{site}");
    }
    let verdict = out.stderr.lines().find(|l| l.starts_with("CLEAN")).unwrap();
    assert!(!verdict.contains("warning"), "{verdict}");
    // A launch wasting 1% and more is still reported.
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["message"]
                .as_str()
                .unwrap()
                .contains("24 excessive sectors (1% of the total 2080")),
        "{report}"
    );
}

#[test]
fn unittest_suites_put_each_failure_at_its_own_tests_line() {
    // unittest prints Python's tracebacks, one per failed test: the
    // device assert belongs to test_1_lookup's (line 22), not to the last
    // one, test_2_sum_after's setUp, which only met the sticky error.
    let (code, report, stderr) = plain_run("beyond/unittest/lookup");
    assert_eq!(code, 1, "{stderr}");
    for kind in ["device_assert", "cuda_error"] {
        let frame = &site_of_kind(&report, kind)["python_frame"];
        assert!(
            frame["line"] == 22 && frame["func"] == "test_1_lookup",
            "{kind}: {frame}"
        );
    }
    // With no CUDA error, each failed test is a finding of its own.
    let (code, report, stderr) = plain_run("beyond/unittest/failures");
    assert_eq!(code, 1, "{stderr}");
    let mut found: Vec<(u64, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["location"]["line"].as_u64().unwrap(),
                s["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            (
                14,
                "AssertionError: False is not true : fp16 product differs".to_string()
            ),
            (
                22,
                "FileNotFoundError: weights.pt: run the download step first".to_string()
            ),
        ],
        "{stderr}"
    );
}
