//! `--report` formats, rendered from real captures.

use std::path::PathBuf;
use std::process::Command;

use crate::helpers::{cudawatch, require_tool, root, run, sample, site_of_kind};

/// `cudawatch parse` of the oob_write memcheck capture and the coalescing
/// ncu pages, with extra arguments.
fn parse_captures(extra: &[&str]) -> crate::helpers::Output {
    let oob = sample("oob_write");
    let coal = sample("coalescing");
    run(cudawatch()
        .arg("parse")
        .args(extra)
        .arg(oob.join("memcheck.xml"))
        .arg(oob.join("memcheck.stdout"))
        .arg(coal.join("ncu-raw.stdout"))
        .arg(coal.join("ncu-details.stdout"))
        .arg(coal.join("ncu-source-1.stdout")))
}

fn python(script: &str, args: &[&std::path::Path]) -> std::process::Output {
    Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs")
}

#[test]
#[ignore = "needs Microsoft's SARIF validator: cd tests/node && npm ci, then cargo test -- --include-ignored"]
fn the_official_sarif_validator_passes_every_real_run_without_a_warning() {
    let validator =
        root().join("tests/node/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
    require_tool("@microsoft/sarif-multitool", &validator);
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root().join("docs/examples")).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(case) = name.strip_suffix(".report.json") else {
            continue;
        };
        let sarif = tmp.path().join(format!("{case}.sarif"));
        // With a documentation base, as a team that publishes the docs
        // sets it: the tool's informationUri and each rule's helpUri.
        let mut cmd = cudawatch();
        cmd.current_dir(tmp.path())
            .env("CUDAWATCH_DOCS_URL", "https://docs.example.org/cudawatch")
            .arg("report")
            .arg(&path)
            .args(["--report", &format!("sarif={}", sarif.display())]);
        let out = run(cmd);
        assert!(sarif.is_file(), "{case}: {}", out.stderr);
        files.push(sarif);
    }
    assert_eq!(files.len(), 18, "every example run");
    // Without one: no guessed address; the validator's only remark is the
    // missing informationUri (SARIF2005), never an error.
    let bare = tmp.path().join("bare.sarif");
    let out = run(cudawatch()
        .current_dir(tmp.path())
        .arg("report")
        .arg(root().join("docs/examples/oob_write.report.json"))
        .args(["--report", &format!("sarif={}", bare.display())]));
    assert!(bare.is_file(), "{}", out.stderr);
    let checked = Command::new(&validator)
        .arg("validate")
        .arg(&bare)
        .arg("--output")
        .arg(tmp.path().join("bare-validation.sarif"))
        .output()
        .expect("Sarif.Multitool runs");
    let text = String::from_utf8_lossy(&checked.stdout);
    assert!(checked.status.success(), "{text}");
    let remarks: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(": error ") || l.contains(": warning "))
        .collect();
    assert!(
        !remarks.is_empty() && remarks.iter().all(|l| l.contains("warning SARIF2005")),
        "{}",
        remarks.join("\n")
    );
    let log = tmp.path().join("validation.sarif");
    let out = Command::new(&validator)
        .arg("validate")
        .args(&files)
        .arg("--output")
        .arg(&log)
        .output()
        .expect("Sarif.Multitool runs (chmod u+x it if npm skipped its install script)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Done. 18 files scanned."), "{text}");
    // Errors and warnings are printed one per line as `path(line,col): level CODE: ...`.
    let problems: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(": error ") || l.contains(": warning "))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
#[ignore = "needs Python's jsonschema: pip install jsonschema, then cargo test -- --include-ignored"]
fn sarif_validates_against_the_official_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let sarif = tmp.path().join("out.sarif");
    let out = parse_captures(&["--report", &format!("sarif={}", sarif.display())]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let schema: PathBuf = root().join("tests/schemas/sarif-schema-2.1.0.json");
    let check = python(
        "import json, sys, jsonschema\n\
         jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))\n\
         print('valid')",
        &[&sarif, &schema],
    );
    assert!(
        String::from_utf8_lossy(&check.stdout).contains("valid"),
        "SARIF is not valid (needs `pip install jsonschema`): {}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn sarif_points_at_the_bug() {
    let tmp = tempfile::tempdir().unwrap();
    let sarif = tmp.path().join("out.sarif");
    let out = parse_captures(&["--report", &format!("sarif={}", sarif.display())]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let runs = log["runs"].as_array().unwrap();
    let memcheck = runs
        .iter()
        .find(|r| r["tool"]["driver"]["name"] == "cudawatch-memcheck")
        .unwrap();
    let oob = memcheck["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "invalid_access")
        .unwrap();
    assert_eq!(oob["level"], "error");
    assert_eq!(
        oob["locations"][0]["physicalLocation"]["region"]["startLine"],
        6
    );
    assert!(
        oob["partialFingerprints"]["cudawatchSite/v1"]
            .as_str()
            .unwrap()
            .starts_with("invalid_access-")
    );
    assert_eq!(oob["properties"]["count"], 24);
    let ncu = runs
        .iter()
        .find(|r| r["tool"]["driver"]["name"] == "cudawatch-ncu")
        .unwrap();
    assert_eq!(ncu["results"][0]["level"], "warning");
}

#[test]
fn junit_fails_the_root_cause_and_skips_what_follows_it_and_parses_as_xml() {
    let tmp = tempfile::tempdir().unwrap();
    let junit = tmp.path().join("junit.xml");
    let out = parse_captures(&["--report", &format!("junit={}", junit.display())]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let check = python(
        "import sys, xml.etree.ElementTree as E\n\
         root = E.parse(sys.argv[1]).getroot()\n\
         print(root.get('tests'), root.get('failures'), sum(1 for c in root.iter('failure')))",
        &[&junit],
    );
    let counts = String::from_utf8_lossy(&check.stdout);
    assert_eq!(
        counts.trim(),
        // The invalid access fails; the 719 and the leak that follow it
        // are skipped, saying so, instead of failing as three bugs. The
        // ncu pages' 78% wasted sectors fail the coalescing threshold,
        // which parse applies too.
        "5 2 2",
        "tests failures failure-elements: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let text = std::fs::read_to_string(&junit).unwrap();
    assert!(text.contains("invalid_access oob_write at"), "{text}");
    assert_eq!(
        text.matches("skipped message=\"follows the root cause")
            .count(),
        2,
        "{text}"
    );
}

#[test]
fn junit_marks_as_failures_exactly_the_findings_that_fail_the_gate() {
    // Before: JUnit failed every error and passed every warning whatever
    // --fail-on said, so a job failed by a warning showed all tests green.
    let tmp = tempfile::tempdir().unwrap();
    let junit = tmp.path().join("junit.xml");
    let case = |fail_on: &str| {
        let out = parse_captures(&[
            "--fail-on",
            fail_on,
            "--report",
            &format!("junit={}", junit.display()),
        ]);
        let text = std::fs::read_to_string(&junit).unwrap();
        let failed = |kind: &str| {
            text.split("<testcase ")
                .find(|case| case.contains(&format!("name=\"{kind} ")))
                .unwrap_or_else(|| panic!("no {kind} test case in {text}"))
                .contains("<failure")
        };
        (
            out.code,
            failed("invalid_access"),
            failed("uncoalesced_access"),
        )
    };
    assert_eq!(case("error"), (1, true, false));
    assert_eq!(case("warning"), (1, true, true));
    assert_eq!(case("never"), (0, false, false));
}

#[test]
fn markdown_goes_to_stdout_and_to_the_github_step_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let oob = sample("oob_write");
    let out = run(cudawatch()
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("CUDAWATCH_DOCS_URL", "https://docs.example.org/cudawatch/")
        .args(["parse", "--report", "markdown"])
        .arg(oob.join("memcheck.xml")));
    assert!(
        out.stdout
            .contains("| memcheck | [invalid_access](https://docs.example.org/cudawatch/errors.md#invalid_access) | user | oob\\_write |"),
        "{}",
        out.stdout
    );
    let appended = std::fs::read_to_string(&summary).unwrap();
    assert!(
        appended.starts_with("earlier step\n## cudawatch"),
        "{appended}"
    );
}

#[test]
fn without_a_documentation_base_no_format_links_to_a_guessed_address() {
    let oob = sample("oob_write");
    for format in ["markdown", "html", "sarif", "junit", "json"] {
        let out = run(cudawatch()
            .env_remove("CUDAWATCH_DOCS_URL")
            .args(["parse", "--report", format])
            .arg(oob.join("memcheck.xml")));
        assert_eq!(out.code, 1, "{format}: {}", out.stderr);
        assert!(
            !out.stdout.contains("github.com"),
            "{format}: {}",
            out.stdout
        );
        assert!(
            !out.stdout.contains("errors.md#"),
            "{format}: {}",
            out.stdout
        );
        if format != "json" && format != "sarif" {
            assert!(
                out.stdout.contains("invalid_access"),
                "{format} still names the topic"
            );
        }
    }
    let explain = run(cudawatch()
        .env_remove("CUDAWATCH_DOCS_URL")
        .args(["explain", "700"]));
    assert!(
        explain.stdout.contains("cudawatch explain --all"),
        "{}",
        explain.stdout
    );
    let sarif = run(cudawatch()
        .env("CUDAWATCH_DOCS_URL", "https://docs.example.org/cw")
        .args(["parse", "--report", "sarif"])
        .arg(oob.join("memcheck.xml")));
    assert!(
        sarif
            .stdout
            .contains("\"helpUri\": \"https://docs.example.org/cw/errors.md#invalid_access\""),
        "{}",
        sarif.stdout
    );
}

#[test]
fn two_reports_on_stdout_are_a_usage_error_before_anything_runs() {
    let out = run(cudawatch().args(["run", "--format", "json", "--report", "sarif", "--", "true"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("only one report can go to stdout"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_unwritable_report_fails_before_the_run_and_never_costs_the_other_reports() {
    let tmp = tempfile::tempdir().unwrap();
    // A regular file where a directory should be: cannot be created.
    let blocker = tmp.path().join("blocker");
    std::fs::write(&blocker, "").unwrap();
    let bad = format!("sarif={}/x.sarif", blocker.display());
    let marker = tmp.path().join("ran");
    let out = run(cudawatch()
        .args(["run", "--report", &bad, "--", "touch"])
        .arg(&marker));
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(!marker.exists(), "the program must not have run");
    assert!(out.stderr.contains("cannot write"), "{}", out.stderr);

    // A directory that is not there is not created (a typo would make
    // directories anywhere): the error says how to make it.
    let missing = tmp.path().join("reports/deep/cudawatch.html");
    let out = parse_captures(&["--report", &format!("html={}", missing.display())]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("does not exist: create it first (mkdir -p"),
        "{}",
        out.stderr
    );
    assert!(!tmp.path().join("reports").exists());

    // Rendering: the good reports are written, and said, though the bad
    // one fails.
    std::fs::create_dir_all(tmp.path().join("reports/deep")).unwrap();
    let good = missing;
    let out = parse_captures(&[
        "--report",
        &bad,
        "--report",
        &format!("html={}", good.display()),
    ]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(good.is_file(), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&format!("wrote the html report: {}", good.display())),
        "{}",
        out.stderr
    );
}

#[test]
fn a_baseline_keeps_known_findings_from_failing_and_diff_lists_new_and_fixed() {
    let tmp = tempfile::tempdir().unwrap();
    let json_of = |case: &str| {
        let path = tmp.path().join(format!("{case}.json"));
        let dir = sample(case);
        let out = run(cudawatch()
            .args(["parse", "--report"])
            .arg(format!("json={}", path.display()))
            .arg(dir.join("memcheck.xml"))
            .arg(dir.join("memcheck.stdout")));
        assert_eq!(out.code, 1, "{}", out.stderr);
        path
    };
    let old = json_of("oob_write");
    let new = json_of("oob_read");
    let oob = sample("oob_write");
    let same = run(cudawatch()
        .args(["parse", "--baseline"])
        .arg(&old)
        .arg(oob.join("memcheck.xml"))
        .arg(oob.join("memcheck.stdout")));
    assert_eq!(
        same.code, 0,
        "every finding is in the baseline: {}",
        same.stderr
    );
    assert!(same.stdout.contains("(baseline)"), "{}", same.stdout);
    let diff = run(cudawatch()
        .args(["diff", "--format", "json"])
        .arg(&old)
        .arg(&new));
    assert_eq!(diff.code, 1, "new findings fail: {}", diff.stderr);
    let diff: serde_json::Value = serde_json::from_str(&diff.stdout).unwrap();
    let kernels = |key: &str| -> Vec<String> {
        diff[key]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["kernel"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(kernels("new"), vec!["oob_read"]);
    assert_eq!(kernels("fixed"), vec!["oob_write"]);
    let reverse = run(cudawatch().args(["diff"]).arg(&old).arg(&old));
    assert_eq!(reverse.code, 0, "{}", reverse.stderr);
}

#[test]
fn completions_and_man_page_come_from_the_real_flags() {
    let bash = run(cudawatch().args(["completions", "bash"]));
    assert_eq!(bash.code, 0, "{}", bash.stderr);
    assert!(
        bash.stdout.contains("--fail-on") && bash.stdout.contains("--report"),
        "bash completion knows the flags"
    );
    let man = run(cudawatch().arg("man"));
    assert!(
        man.stdout.contains(".TH cudawatch 1"),
        "{}",
        &man.stdout[..200.min(man.stdout.len())]
    );
    assert!(
        man.stdout.contains("cudawatch\\-diff"),
        "the man page lists the subcommands"
    );
    let help = run(cudawatch().args(["run", "--help"]));
    assert!(
        help.stdout
            .contains("Example: cudawatch run -- python train.py"),
        "{}",
        help.stdout
    );
}

#[test]
fn suppressed_findings_stay_visible_and_do_not_fail_and_a_bad_rule_file_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("suppress.toml");
    std::fs::write(
        &rules,
        "[[suppress]]\ntool = \"memcheck\"\nkernel = \"oob_*\"\nreason = \"tracked in BUG-1\"\n\n\
         [[suppress]]\nkind = \"leak\"\nframe = \"main@oob_write\"\nreason = \"freed by the driver at exit\"\n\n\
         [[suppress]]\nkind = \"api_error\"\nframe = \"main@oob_write\"\nreason = \"follows BUG-1\"\nexpires = \"2000-01-01\"\n",
    )
    .unwrap();
    let oob = sample("oob_write");
    let out = run(cudawatch()
        .args(["parse", "--format", "json", "--suppressions"])
        .arg(&rules)
        .arg(oob.join("memcheck.xml")));
    // The expired rule no longer hides the API error, but that 719 follows
    // from the invalid access, which is suppressed: nothing gates.
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let by_kind = |k: &str| site_of_kind(&report, k).clone();
    assert_eq!(by_kind("invalid_access")["suppressed"], "tracked in BUG-1");
    assert_eq!(by_kind("leak")["suppressed"], "freed by the driver at exit");
    assert!(by_kind("api_error").get("suppressed").is_none());
    assert_eq!(
        by_kind("api_error")["consequence_of"],
        by_kind("invalid_access")["id"]
    );
    let human = run(cudawatch()
        .args(["parse", "--suppressions"])
        .arg(&rules)
        .arg(oob.join("memcheck.xml")))
    .stdout;
    assert!(
        human.contains("(suppressed)") && human.contains("expired on 2000-01-01"),
        "{human}"
    );

    std::fs::write(&rules, "[[suppress]]\nkind = \"leak\"\n").unwrap();
    let bad = run(cudawatch()
        .args(["parse", "--suppressions"])
        .arg(&rules)
        .arg(oob.join("memcheck.xml")));
    assert_eq!(bad.code, 4, "{}", bad.stderr);
    let line = bad
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap();
    assert!(
        line.contains("suppress.toml") && line.contains("reason"),
        "{line}"
    );
}

#[test]
fn a_saved_report_is_judged_again_by_todays_rules_not_by_the_marks_it_was_saved_with() {
    // A GPU job saves the judged JSON; a later job renders it as the gate.
    // The suppressions and baseline it was saved under must not keep
    // hiding a finding once they are no longer given (a false PASS), and
    // giving them again must not say an expiry twice.
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("suppress.toml");
    std::fs::write(
        &rules,
        "[[suppress]]\ntool = \"memcheck\"\nkernel = \"oob_*\"\nreason = \"tracked in BUG-1\"\n\n\
         [[suppress]]\nkind = \"api_error\"\nframe = \"main@oob_write\"\nreason = \"follows BUG-1\"\nexpires = \"2000-01-01\"\n",
    )
    .unwrap();
    let oob = sample("oob_write");
    let saved = tmp.path().join("saved.json");
    let out = run(cudawatch()
        .args(["parse", "--format", "json", "--suppressions"])
        .arg(&rules)
        .arg(oob.join("memcheck.xml")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::write(&saved, &out.stdout).unwrap();
    let report_of = |extra: &[&std::ffi::OsStr]| {
        run(cudawatch()
            .args(["report", "--format", "json"])
            .arg(&saved)
            .args(extra))
    };
    // Without the rules: the out-of-bounds write gates again.
    let again = report_of(&[]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    let report: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    assert!(
        site_of_kind(&report, "invalid_access")
            .get("suppressed")
            .is_none()
    );
    assert!(!again.stdout.contains("expired on 2000-01-01"));
    // With them: as when saved, the expiry said once.
    let same = report_of(&["--suppressions".as_ref(), rules.as_os_str()]);
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert_eq!(same.stdout.matches("expired on 2000-01-01").count(), 1);
    // A report saved as its own baseline passes; without it, it does not.
    let baselined = tmp.path().join("baselined.json");
    let out = run(cudawatch()
        .args(["parse", "--format", "json", "--baseline"])
        .arg(&saved)
        .arg(oob.join("memcheck.xml")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::write(&baselined, &out.stdout).unwrap();
    let plain = run(cudawatch()
        .args(["report", "--format", "json"])
        .arg(&baselined));
    assert_eq!(plain.code, 1, "{}", plain.stderr);
}

#[test]
fn cudawatch_suppress_writes_a_rule_that_then_suppresses_the_site() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("report.json");
    let oob = sample("oob_write");
    run(cudawatch()
        .args(["parse", "--report"])
        .arg(format!("json={}", json.display()))
        .arg(oob.join("memcheck.xml")));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let id = site_of_kind(&report, "invalid_access")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let rules = tmp.path().join("rules.toml");
    let wrote = run(cudawatch()
        .args(["suppress"])
        .arg(&json)
        .arg(&id)
        .args([
            "--reason",
            "tracked \"upstream\"",
            "--expires",
            "2099-12-31",
            "--file",
        ])
        .arg(&rules));
    assert_eq!(wrote.code, 0, "{}", wrote.stderr);
    assert!(!wrote.stderr.contains("does not match"), "{}", wrote.stderr);
    let again = run(cudawatch()
        .args(["parse", "--format", "json", "--suppressions"])
        .arg(&rules)
        .arg(oob.join("memcheck.xml")));
    let report: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    let site = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(site["suppressed"], "tracked \"upstream\"");
    let missing = run(cudawatch()
        .args(["suppress"])
        .arg(&json)
        .args(["nope", "--reason", "r", "--file"])
        .arg(&rules));
    assert_eq!(missing.code, 2, "{}", missing.stderr);
}

#[test]
fn sarif_carries_the_checklist_and_an_inconclusive_stage_is_not_a_successful_execution() {
    // A real PyTorch training step whose memcheck (--leak-check full)
    // crashed under the tool.
    let tmp = tempfile::tempdir().unwrap();
    let sarif = tmp.path().join("out.sarif");
    let mut cmd = cudawatch();
    cmd.current_dir(tmp.path())
        .arg("report")
        .arg(root().join("tests/integration/fixtures/torch_leak_check_crash.report.json"))
        .args(["--report", &format!("sarif={}", sarif.display())]);
    let out = run(cmd);
    assert_eq!(out.code, 3, "{}", out.stderr);
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let checklist = log["properties"]["checklist"].as_array().unwrap();
    assert_eq!(checklist.len(), 13);
    let memcheck_item = checklist
        .iter()
        .find(|i| i["id"] == "memcheck_clean")
        .unwrap();
    assert_eq!(memcheck_item["status"], "inconclusive");
    let invocation = |tool: &str| {
        log["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["tool"]["driver"]["name"] == format!("cudawatch-{tool}"))
            .unwrap()["invocations"][0]
            .clone()
    };
    let memcheck = invocation("memcheck");
    assert_eq!(memcheck["executionSuccessful"], false);
    assert!(
        memcheck["toolExecutionNotifications"][0]["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("memcheck inconclusive: the program crashed under the tool"),
        "{memcheck}"
    );
    let racecheck = invocation("racecheck");
    assert_eq!(racecheck["executionSuccessful"], true);
    assert_eq!(racecheck["exitCode"], 0);
}

#[test]
fn a_report_names_the_projects_files_from_the_project_and_every_format_agrees() {
    // Before: a report made on a GPU host named `/root/out/e2e/...` in every
    // site and frame, so a committed or shared report carried the host.
    let tmp = tempfile::tempdir().unwrap();
    let checkout = tmp.path().join("proj");
    std::fs::create_dir_all(checkout.join("tests/gpu")).unwrap();
    std::fs::copy(
        root().join("tests/gpu/oob_write.cu"),
        checkout.join("tests/gpu/oob_write.cu"),
    )
    .unwrap();
    // The H100's capture, as if made in this checkout.
    let xml = std::fs::read_to_string(sample("oob_write").join("memcheck.xml"))
        .unwrap()
        .replace("/work/main/", &format!("{}/", checkout.display()));
    let capture = tmp.path().join("memcheck.xml");
    std::fs::write(&capture, xml).unwrap();
    let json = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(&capture)
        .current_dir(&checkout));
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let site = &report["findings"][0];
    assert_eq!(
        site["location"]["file"], "./tests/gpu/oob_write.cu",
        "{site}"
    );
    assert!(
        site["snippet"].is_object(),
        "the snippet is still read: {site}"
    );
    assert!(
        !json.stdout.contains(&checkout.display().to_string()),
        "no path of the machine is left"
    );
    let saved = tmp.path().join("r.json");
    std::fs::write(&saved, &json.stdout).unwrap();
    // Rendered elsewhere, the terminal shows it as a compiler would, and
    // SARIF as a file of the repository.
    let text = run(cudawatch()
        .arg("report")
        .arg(&saved)
        .current_dir(tmp.path()));
    assert!(
        text.stdout.contains("    at tests/gpu/oob_write.cu:6"),
        "{}",
        text.stdout
    );
    let sarif = tmp.path().join("r.sarif");
    run(cudawatch()
        .arg("report")
        .arg(&saved)
        .args(["--report", &format!("sarif={}", sarif.display())])
        .current_dir(tmp.path()));
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let artifact =
        &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(artifact["uri"], "tests/gpu/oob_write.cu", "{artifact}");
    assert_eq!(artifact["uriBaseId"], "%SRCROOT%");
}

#[test]
fn a_run_directory_copied_from_another_clone_names_and_shows_this_projects_files() {
    // A CI runner's run directory, read in the user's own clone: its
    // files were the runner's (`/home/runner/...`), named whole and without
    // snippets; they are the same files of this project.
    let tmp = tempfile::tempdir().unwrap();
    let (there, here) = (tmp.path().join("runner"), tmp.path().join("laptop"));
    for dir in [&there, &here] {
        std::fs::create_dir_all(dir.join("proj")).unwrap();
        std::fs::write(
            dir.join("proj/prog.py"),
            "def step():\n    raise RuntimeError(\"CUDA error: an illegal memory access was \
             encountered\")\n\nstep()\n",
        )
        .unwrap();
    }
    let out = run(cudawatch()
        .current_dir(there.join("proj"))
        .args(["--color", "never", "run", "--stages", "plain", "--out-dir"])
        .arg(there.join("run"))
        .args(["--", "python3", "prog.py"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    std::fs::rename(there.join("run"), here.join("run")).unwrap();
    std::fs::remove_dir_all(&there).unwrap();
    let out = run(cudawatch()
        .current_dir(here.join("proj"))
        .args(["--color", "never", "report", "../run"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.contains(">     2 |     raise RuntimeError(")
            && !out.stdout.contains("runner/proj/prog.py:"),
        "{}",
        out.stdout
    );
    let json = run(cudawatch()
        .current_dir(here.join("proj"))
        .args(["report", "--format", "json", "../run"]));
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let site = site_of_kind(&report, "cuda_error");
    assert_eq!(site["location"]["file"], "./prog.py", "{site}");
}

#[test]
fn stages_blocked_by_a_failure_the_baseline_accepts_keep_the_run_from_clean() {
    // Issue 58's path: the plain run hangs in a collective until its
    // timeout and fails; the tool stages are not run (they would only hang
    // again). With that failure accepted in a baseline, the run came out
    // "CLEAN ... 1 site accepted", exit 0, memcheck and racecheck unnamed.
    let tmp = tempfile::tempdir().unwrap();
    let program = tmp.path().join("prog.sh");
    std::fs::write(
        &program,
        "#!/bin/sh\necho \"[rank0]:[E1128 10:00:00.000000000 ProcessGroupNCCL.cpp:632] [Rank 0] \
         Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, \
         NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600023 milliseconds before timing \
         out.\" >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let check = |out_dir: &str, baseline: Option<&std::path::Path>| {
        let mut cmd = cudawatch();
        cmd.env("FAKE_CASE", sample("clean"))
            .args(["--color", "never", "run", "--grace", "0.5"])
            .args([
                "--stages",
                "plain,memcheck,racecheck",
                "--compute-sanitizer",
            ])
            .arg(root().join("tests/fakes/compute-sanitizer"))
            .arg("--out-dir")
            .arg(tmp.path().join(out_dir));
        if let Some(baseline) = baseline {
            cmd.arg("--baseline").arg(baseline);
        }
        run(cmd.arg("--").arg(&program))
    };
    let first = check("first", None);
    assert_eq!(first.code, 1, "{}", first.stderr);
    let again = check("again", Some(&tmp.path().join("first/report.json")));
    assert_eq!(again.code, 3, "{}", again.stderr);
    assert!(
        again.stderr.contains(
            "INCONCLUSIVE: memcheck, racecheck (blocked by the plain run's collective timeout"
        ),
        "{}",
        again.stderr
    );
}
