//! One judgement: the checklist honours the baseline, the printed verdict
//! agrees with the exit code under every policy, and a report that cannot
//! be written never hides an interruption. Run on the real H100 reports in
//! docs/examples/ and on fake runs.

use std::path::PathBuf;

use crate::helpers::{cudawatch, json, read_json, root, run};

fn example(name: &str) -> PathBuf {
    root()
        .join("docs/examples")
        .join(format!("{name}.report.json"))
}

/// The verdict labels the terminal printed, in order.
fn printed_labels(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|l| l.split_once(':').map(|(label, _)| label))
        .filter(|label| {
            [
                "CLEAN",
                "PASSED",
                "FINDINGS",
                "FAILED",
                "INCONCLUSIVE",
                "INTERRUPTED",
            ]
            .contains(label)
        })
        .collect()
}

#[test]
fn a_report_is_its_own_baseline_so_nothing_fails_not_even_the_checklist() {
    // Before: exit 1 with "failed checks: memcheck clean, ...": the
    // checklist counted findings the baseline already had.
    let report = example("oob_write");
    let out = run(cudawatch()
        .arg("report")
        .arg(&report)
        .arg("--baseline")
        .arg(&report));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(printed_labels(&out.stdout), ["CLEAN"], "{}", out.stdout);
    assert!(out.stdout.contains("1 site accepted"), "{}", out.stdout);
}

#[test]
fn a_run_directory_with_its_own_report_as_baseline_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let first = run(crate::run::fake_run(
        "oob_write",
        &dir,
        "plain,memcheck",
        &[],
    ));
    assert_eq!(first.code, 1, "{}", first.stderr);
    let baseline = tmp.path().join("baseline.json");
    std::fs::copy(dir.join("report.json"), &baseline).unwrap();
    let out = run(cudawatch()
        .arg("report")
        .arg(&dir)
        .arg("--baseline")
        .arg(&baseline));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let unchanged = run(cudawatch().arg("report").arg(&dir));
    assert_eq!(
        unchanged.code, 1,
        "without the baseline the findings still fail"
    );
}

#[test]
fn the_verdict_agrees_with_the_exit_code_under_every_policy() {
    let examples: Vec<String> = std::fs::read_dir(root().join("docs/examples"))
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            Some(name.strip_suffix(".report.json")?.to_string())
        })
        .collect();
    assert!(examples.len() >= 18, "{examples:?}");
    let policies: [&[&str]; 6] = [
        &["--fail-on", "error"],
        &["--fail-on", "warning"],
        &["--fail-on", "note"],
        &["--fail-on", "never"],
        &["--fail-on", "warning", "--max-wasted-sectors", "90"],
        &["--fail-on", "error", "--max-wasted-sectors", "100"],
    ];
    for name in &examples {
        for policy in policies {
            let out = run(cudawatch()
                .arg("report")
                .arg(example(name))
                .args(policy)
                .args(["--format", "json"]));
            let what = format!("{name} {policy:?}");
            let judged = json(&out);
            assert_eq!(judged["exit_code"], out.code, "{what}");
            let labels = printed_labels(&out.stderr);
            let has = |l: &str| labels.contains(&l);
            match out.code {
                0 => assert!(
                    !labels.is_empty() && labels.iter().all(|l| ["CLEAN", "PASSED"].contains(l)),
                    "{what}: exit 0 but {labels:?}"
                ),
                1 => assert!(
                    (has("FINDINGS") || has("FAILED")) && !has("CLEAN") && !has("PASSED"),
                    "{what}: exit 1 but {labels:?}"
                ),
                3 => assert!(
                    has("INCONCLUSIVE") && !has("CLEAN"),
                    "{what}: exit 3 but {labels:?}"
                ),
                other => panic!("{what}: exit {other}: {}", out.stderr),
            }
        }
    }
}

#[test]
fn the_two_verdicts_that_contradicted_their_exit_codes() {
    // Before: a green CLEAN with exit 1.
    let out = run(cudawatch().arg("report").arg(example("coalescing")).args([
        "--max-wasted-sectors",
        "90",
        "--fail-on",
        "warning",
    ]));
    assert_eq!(out.code, 1);
    assert_eq!(printed_labels(&out.stdout), ["FINDINGS"], "{}", out.stdout);
    assert!(out.stdout.contains("; 1 warning site"), "{}", out.stdout);
    // Before: a red FINDINGS with exit 0.
    let out = run(cudawatch()
        .arg("report")
        .arg(example("oob_write"))
        .args(["--fail-on", "never"]));
    assert_eq!(out.code, 0);
    assert_eq!(printed_labels(&out.stdout), ["PASSED"], "{}", out.stdout);
    assert!(
        out.stdout
            .contains("1 error site, none fails the gate (--fail-on never)"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_interrupted_run_whose_report_cannot_be_written_still_exits_130() {
    // The program turns the report's directory into a file, then sends
    // cudawatch the user's Ctrl-C: the run is interrupted, and writing the
    // SARIF fails. Before: exit 5, the interruption lost.
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    let mut cmd = cudawatch();
    cmd.arg("run")
        .args(["--stages", "plain,memcheck", "--grace", "0.5"])
        .arg("--out-dir")
        .arg(tmp.path().join("run"))
        .arg("--report")
        .arg(format!("sarif={}/out.sarif", reports.display()))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "rm -rf '{0}' && echo x > '{0}' && kill -INT $PPID && sleep 10",
            reports.display()
        ));
    let out = run(cmd);
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert!(out.stderr.contains("error: cannot write"), "{}", out.stderr);
    assert!(
        printed_labels(&out.stderr).contains(&"INTERRUPTED"),
        "{}",
        out.stderr
    );
    let report = read_json(&tmp.path().join("run/report.json"));
    assert_eq!(report["interrupted"], true);
}

#[test]
fn an_error_a_library_made_and_got_past_is_the_librarys_not_a_warning_of_the_users() {
    // A correct DDP step on the H100 (sample-reports/beyond/ddp_ports):
    // NCCL probes a kernel image per architecture at init, and memcheck
    // reports the cudaErrorNoKernelImageForDevice it gets past, under the
    // user's `DDP(...)` line. Listed with NCCL, not beside the user's
    // findings; the verdict stays CLEAN.
    let report = crate::helpers::sample("beyond/ddp_ports/cudawatch-spawn.report.json");
    let out = run(cudawatch()
        .args(["report", "--format", "json"])
        .arg(&report));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let judged = json(&out);
    assert_eq!(judged["verdict"][0]["label"], "clean", "{}", out.stderr);
    let human = run(cudawatch().arg("report").arg(&report)).stdout;
    assert!(human.contains("NCCL: 2 sites (api_error ×8)"), "{human}");
    // `report --format json | jq`: the terminal gets the verdict, not the
    // whole human report again.
    assert!(
        out.stderr.starts_with("CLEAN:") && !out.stderr.contains("Stages"),
        "{}",
        out.stderr
    );
    let nccl: Vec<&serde_json::Value> = judged["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["owner"]["component"] == "NCCL")
        .collect();
    assert_eq!(nccl.len(), 2);
    assert!(nccl.iter().all(|s| s["severity"] == "warning"));
    // Asked for every owner and every level, they gate.
    let out = run(cudawatch()
        .args(["report", "--gate-scope", "all", "--fail-on", "warning"])
        .arg(&report));
    assert_eq!(out.code, 1, "{}", out.stderr);
}
