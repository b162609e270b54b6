//! `cudawatch sweep` and `cudawatch merge` with the fake tools: targets
//! spread over (pretend) GPUs, shards merged, a sweep killed at a random
//! moment and resumed, a budget that runs out, and night-to-night changes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::helpers::{Output, cudawatch, read_json, root, run, sample};

/// One `[[target]]`: its name, the captured case the fakes replay, the
/// plain run's shell script, and extra TOML lines.
struct T<'a>(&'a str, &'a str, &'a str, &'a str);

/// A sweep file in `dir` whose targets append their name to `runs.log`
/// each time their plain run starts.
fn sweep_file(dir: &Path, stages: &str, targets: &[T<'_>]) -> PathBuf {
    let mut text = format!("[defaults]\nstages = {stages}\nrun-args = [\"--grace\", \"0.5\"]\n");
    for T(name, case, script, extra) in targets {
        text += &format!(
            "\n[[target]]\nname = \"{name}\"\ncommand = [\"sh\", \"-c\", \"echo {name} >> {log}; {script}\"]\nenv = {{ FAKE_CASE = \"{case}\" }}\n{extra}\n",
            log = dir.join("runs.log").display(),
            case = sample(case).display(),
        );
    }
    let path = dir.join("sweep.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn sweep_cmd(file: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut cmd = cudawatch();
    cmd.env(
        "CUDAWATCH_COMPUTE_SANITIZER",
        root().join("tests/fakes/compute-sanitizer"),
    )
    .env("CUDAWATCH_NCU", root().join("tests/fakes/ncu"))
    .arg("sweep")
    .arg(file)
    .arg("--out-dir")
    .arg(out)
    .args(extra);
    cmd
}

fn target<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("target {name} in {report}"))
}

/// A target's command that finds an illegal access and exits 1.
const ILLEGAL_ACCESS: &str =
    "echo RuntimeError: CUDA error: an illegal memory access was encountered >&2; exit 1";

/// `cudawatch merge` of the sweep in `out`, which must not be clean: its
/// row of target `name` is incomplete, and its summary says `why`.
fn merged_incomplete(out: &Path, name: &str, why: &str) {
    let mut cmd = cudawatch();
    cmd.args(["merge", "--format", "json"]).arg(out);
    let merged = run(cmd);
    assert_ne!(merged.code, 0, "{}", merged.stderr);
    let report: Value = serde_json::from_str(&merged.stdout).unwrap();
    let row = target(&report, name);
    assert_eq!(row["state"], "incomplete", "{row}");
    assert!(row["summary"].as_str().unwrap().contains(why), "{row}");
}

fn runs_of(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join("runs.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == name)
        .count()
}

#[test]
fn a_sweep_runs_every_target_over_the_gpus_and_folds_their_sites() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"plain\", \"memcheck\"]",
        &[
            T("bug", "oob_write", "exit 0", "expect = \"findings\""),
            T("fine", "clean", "exit 0", ""),
            T("same-bug", "oob_write", "exit 0", ""),
        ],
    );
    let out = tmp.path().join("night");
    let reports = tmp.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    let o = run(sweep_cmd(&file, &out, &["--gpus", "0,1"]).args([
        "--report",
        &format!("junit={}", reports.join("j.xml").display()),
        "--report",
        &format!("sarif={}", reports.join("s.sarif").display()),
        "--report",
        &format!("markdown={}", reports.join("s.md").display()),
        "--report",
        &format!("html={}", reports.join("s.html").display()),
        "--report",
        &format!("json={}", reports.join("s.json").display()),
    ]));
    // `same-bug` was expected clean: the sweep fails on it, and only it.
    assert_eq!(o.code, 1, "{}", o.stderr);
    let report = read_json(&out.join("report.json"));
    assert_eq!(target(&report, "bug")["as_expected"], true);
    assert_eq!(target(&report, "fine")["verdict"], "clean");
    assert_eq!(target(&report, "same-bug")["as_expected"], false);
    // The judge decided each row's standing; the formats only render it.
    assert_eq!(target(&report, "bug")["standing"], "as_expected");
    assert_eq!(target(&report, "same-bug")["standing"], "not_as_expected");
    assert_eq!(report["exit_code"], 1);
    // The JSON export is the sweep's own report, lossless.
    assert_eq!(read_json(&reports.join("s.json")), report);
    assert!(
        o.stderr
            .contains("FINDINGS: 1 of 3 targets not as expected: same-bug"),
        "{}",
        o.stderr
    );
    // Targets ran on both GPUs, each pinned with CUDA_VISIBLE_DEVICES.
    let gpus: Vec<&str> = report["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["gpu"].as_str().unwrap())
        .collect();
    assert!(gpus.contains(&"0") && gpus.contains(&"1"), "{gpus:?}");
    // The out-of-bounds write is one row, seen in two programs.
    let oob = report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["site"]["kind"] == "invalid_access")
        .unwrap();
    assert_eq!(oob["targets"], serde_json::json!(["bug", "same-bug"]));
    // Every format the gate writes, each with the failing target.
    let junit = std::fs::read_to_string(reports.join("j.xml")).unwrap();
    assert!(
        junit.contains("name=\"same-bug\"") && junit.contains("failures=\"1\""),
        "{junit}"
    );
    let sarif: Value =
        serde_json::from_slice(&std::fs::read(reports.join("s.sarif")).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(
        results
            .iter()
            .any(|r| r["properties"]["targets"] == serde_json::json!(["bug", "same-bug"]))
    );
    for page in ["s.md", "s.html"] {
        let text = std::fs::read_to_string(reports.join(page)).unwrap();
        assert!(
            text.contains("same-bug") && text.contains("expected clean"),
            "{page}"
        );
    }
}

#[test]
fn a_site_counted_exactly_in_one_program_and_as_a_lower_bound_in_another_sums_to_a_lower_bound() {
    // The planted uninitialised read, once with its call stacks (512
    // records) and once as a flood that initcheck ran again without them
    // (256 kept, the rest counted by the tool): one site, 768 or more.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("sweep.toml");
    std::fs::write(
        &file,
        format!(
            "[defaults]\nstages = [\"plain\", \"initcheck\"]\nrun-args = [\"--grace\", \"0.5\"]\n\
             [[target]]\nname = \"exact\"\ncommand = [\"sh\", \"-c\", \"exit 0\"]\nexpect = \"findings\"\n\
             env = {{ FAKE_CASE = \"{exact}\" }}\n\
             [[target]]\nname = \"flooded\"\ncommand = [\"sh\", \"-c\", \"exit 0\"]\nexpect = \"findings\"\n\
             env = {{ FAKE_CASE = \"{flood}\", FAKE_MODE = \"flood\" }}\n\
             run-args = [\"--flood-records\", \"1000\"]\n",
            exact = sample("uninit_read").display(),
            flood = sample("beyond/floods-uninit_read").display(),
        ),
    )
    .unwrap();
    let out = tmp.path().join("night");
    let (md, html) = (tmp.path().join("s.md"), tmp.path().join("s.html"));
    let o = run(sweep_cmd(
        &file,
        &out,
        &[
            "--gpus",
            "0",
            "--report",
            &format!("markdown={}", md.display()),
            "--report",
            &format!("html={}", html.display()),
        ],
    ));
    assert_eq!(o.code, 0, "both as expected: {}", o.stderr);
    // Every table a person reads says the count is a lower bound.
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(
        markdown.contains("| 2 (exact, flooded) | 768+ |"),
        "{markdown}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<td>768+</td>"), "{page}");
    assert!(o.stderr.contains("768+"), "{}", o.stderr);
    let report = read_json(&out.join("report.json"));
    let sites = report["sites"].as_array().unwrap();
    assert_eq!(sites.len(), 1, "{sites:?}");
    let site = &sites[0];
    assert_eq!(site["targets"], serde_json::json!(["exact", "flooded"]));
    assert_eq!(site["site"]["count"], 768);
    // Before, the merged site kept the first program's exact flag: 768,
    // where the tool had reported more.
    assert_eq!(site["site"]["count_at_least"], true, "{site}");
}

#[test]
fn shards_merge_into_one_report_and_missing_or_foreign_shards_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let targets: Vec<(String, &str)> = (0..7)
        .map(|i| {
            (
                format!("t{i}"),
                if i % 3 == 0 { "oob_write" } else { "clean" },
            )
        })
        .collect();
    let list: Vec<T<'_>> = targets
        .iter()
        .map(|(n, c)| {
            T(
                n,
                c,
                "exit 0",
                if *c == "oob_write" {
                    "expect = \"findings\""
                } else {
                    ""
                },
            )
        })
        .collect();
    let file = sweep_file(tmp.path(), "[\"memcheck\"]", &list);
    let shards: Vec<PathBuf> = (0..3)
        .map(|i| tmp.path().join(format!("shard-{i}")))
        .collect();
    for (i, dir) in shards.iter().enumerate() {
        // Slurm's variables pick the shard, as in a job array.
        let mut cmd = sweep_cmd(&file, dir, &[]);
        cmd.env("SLURM_ARRAY_TASK_ID", i.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", "3");
        let o = run(cmd);
        assert_eq!(o.code, 0, "shard {i}: {}", o.stderr);
    }
    let merge = |dirs: &[&PathBuf]| -> Output {
        let mut cmd = cudawatch();
        cmd.arg("merge").args(dirs).args(["--format", "json"]);
        run(cmd)
    };
    let o = merge(&shards.iter().collect::<Vec<_>>());
    assert_eq!(o.code, 0, "{}", o.stderr);
    let report: Value = serde_json::from_str(&o.stdout).unwrap();
    let names: Vec<&str> = report["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["t0", "t1", "t2", "t3", "t4", "t5", "t6"],
        "every target exactly once"
    );
    assert!(
        report["targets"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["state"] == "finished")
    );
    // A shard missing: named, and the sweep is inconclusive.
    let o = merge(&[&shards[0], &shards[2]]);
    assert_eq!(o.code, 3);
    assert!(o.stderr.contains("missing shard 1/3"), "{}", o.stderr);
    // The same shard twice (a requeued array task): refused, naming both.
    let copy = tmp.path().join("shard-1-again");
    copy_dir(&shards[1], &copy);
    let o = merge(&[&shards[0], &shards[1], &copy, &shards[2]]);
    assert_eq!(o.code, 4);
    assert!(
        o.stderr.contains("shard 1/3 is here and in") && o.stderr.contains("shard-1"),
        "{}",
        o.stderr
    );
    // A shard of another sweep file: refused.
    let other_file = sweep_file(
        &tmp.path().join("other").tap_mkdir(),
        "[\"memcheck\"]",
        &[T("x", "clean", "exit 0", "")],
    );
    let other = tmp.path().join("other-sweep");
    assert_eq!(run(sweep_cmd(&other_file, &other, &[])).code, 0);
    let o = merge(&[&shards[0], &other]);
    assert_eq!(o.code, 4);
    assert!(
        o.stderr.contains("is a shard of another sweep"),
        "{}",
        o.stderr
    );
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}
impl TapMkdir for PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}

fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Every process below `pid`, from /proc.
fn descendants(pid: i32) -> Vec<i32> {
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(child) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().nth(1))
                .and_then(|p| p.parse::<i32>().ok());
            if ppid == Some(parent) && !found.contains(&child) {
                found.push(child);
            }
        }
        i += 1;
    }
    found
}

/// The machine dies: every process of the sweep stops at once. Each is
/// stopped first (a stopped process cannot start another), then killed.
/// Every attempt's record and its run's stage outcomes, for a failure
/// message: what the resumed sweep found on disk (this test failed once in
/// CI, and its directory was gone).
fn attempts_of(out: &Path) -> String {
    let mut text = String::new();
    let Ok(targets) = std::fs::read_dir(out.join("targets")) else {
        return text;
    };
    let mut paths: Vec<_> = targets.flatten().map(|e| e.path()).collect();
    paths.sort();
    for target in paths {
        let mut files: Vec<_> = std::fs::read_dir(&target)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        for file in files {
            let name = file.display().to_string();
            if name.ends_with(".json") {
                let record = std::fs::read_to_string(&file).unwrap_or_default();
                text += &format!("{name}: {}\n", record.replace('\n', " "));
            } else if file.is_dir() {
                let stages = std::fs::read_to_string(file.join("report.json"))
                    .ok()
                    .and_then(|r| serde_json::from_str::<Value>(&r).ok())
                    .map(|r| r["stages"].to_string())
                    .unwrap_or_else(|| "no report".into());
                text += &format!("{name}/: {stages}\n");
            }
        }
    }
    text
}

fn crash(pid: i32) {
    let mut all = Vec::new();
    loop {
        let now = descendants(pid);
        let new: Vec<i32> = now.iter().copied().filter(|p| !all.contains(p)).collect();
        if new.is_empty() {
            break;
        }
        for p in &new {
            unsafe_signal(*p, rustix::process::Signal::STOP);
        }
        all.extend(new);
    }
    for p in all {
        unsafe_signal(p, rustix::process::Signal::KILL);
    }
}

fn unsafe_signal(pid: i32, signal: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// Each attempt directory and the files in it, with their sizes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.ends_with("report.json")
                || !p.parent().unwrap().ends_with(dir.file_name().unwrap())
            {
                out.push((p.clone(), e.metadata().unwrap().len()));
            }
        }
    }
    out
}

#[test]
fn a_sweep_killed_at_a_random_moment_resumes_without_losing_or_repeating_a_target() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    for round in 0..3u32 {
        let tmp = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..6).map(|i| format!("t{i}")).collect();
        let list: Vec<T<'_>> = names
            .iter()
            .map(|n| T(n, "clean", "sleep 0.2", ""))
            .collect();
        let file = sweep_file(tmp.path(), "[\"plain\", \"memcheck\"]", &list);
        let out = tmp.path().join("night");
        // A moment between the start and well into the sweep (six targets,
        // two at a time, about 0.4 s each).
        let delay = Duration::from_millis(u64::from((seed / (round + 1)) % 1200) + 50);
        let child = sweep_cmd(&file, &out, &["--gpus", "0,1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        crash(child.id() as i32);
        let _ = finish_killed(child);
        let before = snapshot(&out.join("targets"));
        let finished_before: Vec<String> = names
            .iter()
            .filter(|n| {
                let rec = out.join("targets").join(n.as_str()).join("attempt-1.json");
                std::fs::read_to_string(rec).is_ok_and(|t| t.contains("\"exit_code\": 0"))
            })
            .cloned()
            .collect();
        let o = run(sweep_cmd(&file, &out, &["--gpus", "0,1"]));
        assert_eq!(
            o.code,
            0,
            "round {round} after {delay:?}: {}\n{}",
            o.stderr,
            attempts_of(&out)
        );
        let report = read_json(&out.join("report.json"));
        for name in &names {
            assert_eq!(
                target(&report, name)["state"],
                "finished",
                "{name} after {delay:?}"
            );
        }
        // What had finished was not run again.
        for name in &finished_before {
            assert_eq!(
                runs_of(tmp.path(), name),
                1,
                "{name} ran twice (killed after {delay:?})"
            );
        }
        // Nothing written before the kill was lost or rewritten.
        for (path, size) in before {
            let now = std::fs::metadata(&path).map(|m| m.len());
            assert_eq!(
                now.ok(),
                Some(size),
                "{} changed by the resume",
                path.display()
            );
        }
    }
}

#[test]
fn a_run_killed_before_its_report_caught_up_with_its_last_stage_runs_again() {
    // The random-kill test's flake, reproduced under load: the sweep was
    // killed after a target's run wrote memcheck's stage.json and before
    // it rewrote report.json. With every stage recorded, that run counted
    // as finished, its stale report ("memcheck not run") was judged, and
    // the resumed sweep was inconclusive.
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"plain\", \"memcheck\"]",
        &[T("t0", "clean", "sleep 0.2", "")],
    );
    let out = tmp.path().join("night");
    let o = run(sweep_cmd(&file, &out, &[]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    // What the kill left: no attempt record, and the report as it was
    // written after the plain run (memcheck still to come).
    let target_dir = out.join("targets/t0");
    std::fs::remove_file(target_dir.join("attempt-1.json")).unwrap();
    let report_path = target_dir.join("attempt-1/report.json");
    let mut stale = read_json(&report_path);
    for stage in stale["stages"].as_array_mut().unwrap() {
        if stage["tool"] == "memcheck" {
            *stage = serde_json::json!({
                "tool": "memcheck",
                "outcome": "inconclusive",
                "reason": "not run: the run ended before this stage (cudawatch was killed, or it is still running)",
            });
        }
    }
    std::fs::write(&report_path, serde_json::to_string(&stale).unwrap()).unwrap();
    let o = run(sweep_cmd(&file, &out, &[]));
    assert_eq!(o.code, 0, "{}\n{}", o.stderr, attempts_of(&out));
    let report = read_json(&out.join("report.json"));
    assert_eq!(target(&report, "t0")["state"], "finished");
    assert_eq!(
        target(&report, "t0")["attempts"],
        2,
        "run again, beside the first"
    );
    assert!(
        target_dir.join("attempt-1/memcheck/stage.json").is_file(),
        "the first stays"
    );
}

fn finish_killed(mut child: std::process::Child) -> std::process::ExitStatus {
    child.wait().unwrap()
}

#[test]
fn a_target_stopped_by_the_budget_keeps_its_findings_and_is_run_again_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    // memcheck first (it finds the bug at once), then a plain run that
    // outlives the budget.
    let file = sweep_file(
        tmp.path(),
        "[\"memcheck\", \"plain\"]",
        &[
            T("slow", "oob_write", "sleep 30", "expect = \"findings\""),
            T("later", "clean", "exit 0", ""),
        ],
    );
    let out = tmp.path().join("night");
    let o = run(sweep_cmd(&file, &out, &["--budget", "2", "--grace", "5"]));
    assert_eq!(o.code, 3, "{}", o.stderr);
    let report = read_json(&out.join("report.json"));
    let slow = target(&report, "slow");
    assert_eq!(slow["state"], "incomplete");
    assert!(
        slow["summary"]
            .as_str()
            .unwrap()
            .contains("stopped by the sweep's budget"),
        "{slow}"
    );
    assert!(
        slow["counts"]["errors"].as_u64().unwrap() >= 1,
        "partial findings kept: {slow}"
    );
    assert_eq!(target(&report, "later")["state"], "not_run");
    // Resumed without a budget (and a plain run that now ends): the
    // incomplete target runs again beside its first attempt, which stays.
    let o = run(sweep_cmd(&file, &out, &[]).env("CUDAWATCH_PLAIN_TIMEOUT", "1"));
    let report = read_json(&out.join("report.json"));
    assert_eq!(
        target(&report, "later")["state"],
        "finished",
        "{}",
        o.stderr
    );
    assert_eq!(target(&report, "slow")["attempts"], 2);
    assert!(
        out.join("targets/slow/attempt-1/memcheck/memcheck.xml")
            .is_file()
    );
}

#[test]
fn night_to_night_targets_are_new_fixed_still_failing_or_flaky() {
    let tmp = tempfile::tempdir().unwrap();
    // Both nights' files in one place, so unchanged commands are the same.
    let night = |n: u32, flaky_case: &str, changed_case: &str| {
        let dir = tmp.path().to_path_buf();
        std::fs::write(dir.join("changed.sh"), format!("# night {n}\nexit 0\n")).unwrap();
        let mut file = sweep_file(
            &dir,
            "[\"memcheck\"]",
            &[
                T("steady", "clean", "exit 0", ""),
                T("flaky", flaky_case, "exit 0", ""),
                T("still", "oob_write", "exit 0", ""),
            ],
        );
        // A target whose script changed between the nights.
        let mut text = std::fs::read_to_string(&file).unwrap();
        text += &format!(
            "\n[[target]]\nname = \"changed\"\ncommand = [\"sh\", \"changed.sh\"]\nenv = {{ FAKE_CASE = \"{}\" }}\n",
            sample(changed_case).display()
        );
        std::fs::write(&file, text).unwrap();
        file = file.canonicalize().unwrap();
        file
    };
    let history = tmp.path().join("history.jsonl");
    let first = tmp.path().join("sweep-1");
    // The first night as docs/sweeps.md's nightly command runs it: the
    // history is its baseline and its record, and does not exist yet.
    let h = history.to_str().unwrap();
    let o = run(sweep_cmd(
        &night(1, "clean", "oob_write"),
        &first,
        &["--baseline", h, "--history", h],
    ));
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("no baseline yet") && o.stderr.contains("this sweep's line starts it"),
        "{}",
        o.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&history).unwrap().lines().count(),
        1
    );
    let second = tmp.path().join("sweep-2");
    let o = run(sweep_cmd(
        &night(2, "oob_write", "clean"),
        &second,
        &[
            "--history",
            history.to_str().unwrap(),
            "--baseline",
            first.to_str().unwrap(),
            "--report",
            &format!("markdown={}", tmp.path().join("m.md").display()),
        ],
    ));
    let report = read_json(&second.join("report.json"));
    let change = |name: &str| {
        target(&report, name)["change"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Same command, same files, another verdict: flaky, not a new bug.
    assert_eq!(change("flaky"), "flaky");
    assert_eq!(change("still"), "still_failing");
    assert_eq!(change("steady"), "unchanged");
    // Its script changed and its bug went away: fixed.
    assert_eq!(change("changed"), "fixed");
    assert!(
        o.stderr.contains("1 fixed, 1 flaky, 1 still failing"),
        "{}",
        o.stderr
    );
    // The history has both nights, and the Markdown report the trend.
    assert_eq!(
        std::fs::read_to_string(&history).unwrap().lines().count(),
        2
    );
    let md = std::fs::read_to_string(tmp.path().join("m.md")).unwrap();
    assert!(
        md.contains("### Trend") && md.contains("xychart-beta"),
        "{md}"
    );
    // The same night resumed is one line, not two.
    let _ = run(sweep_cmd(
        &night(2, "oob_write", "clean"),
        &second,
        &["--history", history.to_str().unwrap()],
    ));
    assert_eq!(
        std::fs::read_to_string(&history).unwrap().lines().count(),
        2
    );
}

#[test]
fn night_to_night_library_sites_that_come_and_go_are_counted_apart_from_the_users() {
    // racecheck does not see every hazard inside cuDNN or CUB every run
    // (ViT-tiny's step: 124 to 132 hazards over runs of the same program),
    // so a nightly comparison that listed each as new or fixed would make
    // every night look changed. Night 1: library hazards (a real capture
    // of torch.sort and cuDNN attention) and a clean user program; night 2:
    // the library hazards gone and a race in the user's own kernel.
    let tmp = tempfile::tempdir().unwrap();
    let night = |n: u32, lib: &str, user: &str| {
        let dir = tmp.path().join(format!("night-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        sweep_file(
            &dir,
            "[\"racecheck\"]",
            &[T("lib", lib, "exit 0", ""), T("user", user, "exit 0", "")],
        )
    };
    let first = tmp.path().join("sweep-1");
    // The baseline is last night's history line, which keeps which sites
    // were outside the scope.
    let history = tmp.path().join("history.jsonl");
    let o = run(sweep_cmd(
        &night(1, "beyond/library_kernels", "clean"),
        &first,
        &["--history", history.to_str().unwrap()],
    ));
    assert_eq!(o.code, 0, "library hazards do not gate: {}", o.stderr);
    let before = read_json(&first.join("report.json"));
    let library_sites = before["sites"].as_array().unwrap().len();
    assert!(library_sites > 0, "{before}");
    let second = tmp.path().join("sweep-2");
    let md = tmp.path().join("m.md");
    let o = run(sweep_cmd(
        &night(2, "clean", "smem_race"),
        &second,
        &[
            "--baseline",
            history.to_str().unwrap(),
            "--report",
            &format!("markdown={}", md.display()),
        ],
    ));
    assert_eq!(o.code, 1, "{}", o.stderr);
    let report = read_json(&second.join("report.json"));
    let fixed = report["fixed_sites"].as_array().unwrap();
    assert_eq!(fixed.len(), library_sites, "{report}");
    assert!(fixed.iter().all(|f| f["out_of_scope"] == true), "{report}");
    // The user's race is new and counted as such; the library's are apart.
    let new_sites = report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["change"] == "new" && s["out_of_scope"] != true)
        .count();
    assert!(new_sites >= 1, "{report}");
    let expected = format!(
        "{}, 0 fixed; outside the gate's scope 0 new and {library_sites} gone",
        if new_sites == 1 {
            "1 new site".to_string()
        } else {
            format!("{new_sites} new sites")
        }
    );
    assert!(o.stderr.contains(&expected), "{expected}\n{}", o.stderr);
    // No "Fixed" heading for what only the library's variance took away.
    assert!(
        !o.stderr.contains("Fixed since the baseline"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains(&format!(
            "{library_sites} sites outside the gate's scope (library or framework internals) no longer seen"
        )),
        "{}",
        o.stderr
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        !md.contains("### Fixed since the baseline") && md.contains("no longer seen"),
        "{md}"
    );
}

#[test]
fn a_targets_run_warnings_are_in_the_sweeps_report_where_its_summary_points() {
    // A run's verdict says "with 1 warning (see Warnings)"; in a sweep the
    // reader has the sweep's report, so the warnings must be there too.
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"memcheck\"]",
        &[T(
            "rooted",
            "oob_write",
            "exit 0",
            // Snippets are never read under `/`: the run says so.
            "run-args = [\"--source-root\", \"/\"]\nexpect = \"findings\"",
        )],
    );
    let out = tmp.path().join("sweep");
    let md = tmp.path().join("m.md");
    let o = run(sweep_cmd(
        &file,
        &out,
        &["--report", &format!("markdown={}", md.display())],
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let report = read_json(&out.join("report.json"));
    let warnings = target(&report, "rooted")["warnings"].to_string();
    assert!(
        warnings.contains("snippets: no source snippets"),
        "{report}"
    );
    // Not the sweep's own warning: it does not make the sweep inconclusive.
    assert!(report.get("warnings").is_none(), "{report}");
    assert!(
        o.stderr.contains(
            "rooted: snippets: no source snippets: the source root is the filesystem's root"
        ),
        "{}",
        o.stderr
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("### Warnings") && md.contains("rooted: snippets"),
        "{md}"
    );
}

#[test]
fn a_bad_sweep_file_is_one_line_naming_file_line_and_key_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("sweep.toml");
    std::fs::write(
        &file,
        "[[target]]\nname = \"a\"\ncommand = [\"true\"]\ntimeuot = 5\n",
    )
    .unwrap();
    let out = tmp.path().join("night");
    let o = run(sweep_cmd(&file, &out, &[]));
    // A setup error, like a bad suppression or config file (was 2).
    assert_eq!(o.code, 4);
    let line = o.stderr.trim();
    assert!(
        line.starts_with("error: ") && line.contains("sweep.toml:4: unknown field `timeuot`"),
        "{line}"
    );
    assert_eq!(line.lines().count(), 1);
    assert!(!out.exists(), "nothing ran");
    // A target whose program is missing is the same kind of error.
    std::fs::write(
        &file,
        "[[target]]\nname = \"a\"\ncommand = [\"./build/app\"]\n",
    )
    .unwrap();
    let o = run(sweep_cmd(&file, &out, &[]));
    assert_eq!(o.code, 4);
    assert!(
        o.stderr
            .contains("sweep.toml:3: target \"a\": `command`: cannot run `./build/app`"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_target_that_cannot_start_is_its_own_setup_error_and_the_others_run() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"memcheck\"]",
        &[
            // Its run refuses to start: the suppressions file it names is not there.
            T(
                "broken",
                "clean",
                "exit 0",
                "run-args = [\"--baseline\", \"/nonexistent/last.json\"]",
            ),
            T("fine", "clean", "exit 0", ""),
        ],
    );
    let out = tmp.path().join("night");
    let o = run(sweep_cmd(&file, &out, &[]));
    assert_eq!(o.code, 3, "{}", o.stderr);
    let report = read_json(&out.join("report.json"));
    let broken = target(&report, "broken");
    assert_eq!(broken["state"], "setup_error");
    assert!(
        broken["summary"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/last.json"),
        "{broken}"
    );
    assert_eq!(target(&report, "fine")["state"], "finished");
    assert!(
        o.stderr
            .contains("INCONCLUSIVE: 1 of 2 targets not fully checked: broken"),
        "{}",
        o.stderr
    );
}

#[test]
fn ctrl_c_stops_the_sweep_keeps_what_ran_and_a_resume_finishes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"plain\", \"memcheck\"]",
        &[
            T("long", "clean", "sleep 30", ""),
            T("next", "clean", "exit 0", ""),
        ],
    );
    let out = tmp.path().join("night");
    let child = sweep_cmd(&file, &out, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while runs_of(tmp.path(), "long") == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the first target never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let o = crate::helpers::finish(child);
    assert_eq!(o.code, 130, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("INTERRUPTED: stopped by Ctrl-C or SIGTERM"),
        "{}",
        o.stderr
    );
    let report = read_json(&out.join("report.json"));
    assert_eq!(report["exit_code"], 130);
    let long = target(&report, "long");
    assert_eq!(long["state"], "incomplete", "{long}");
    assert!(
        long["summary"]
            .as_str()
            .unwrap()
            .contains("stopped by the user"),
        "{long}"
    );
    assert_eq!(target(&report, "next")["state"], "not_run");
    assert!(
        out.join("targets/long/attempt-1/report.json").is_file(),
        "the stopped run's report is kept"
    );
    // The resume (with a plain run that now ends in time) finishes both.
    let o = run(sweep_cmd(&file, &out, &[]).env("CUDAWATCH_PLAIN_TIMEOUT", "1"));
    let report = read_json(&out.join("report.json"));
    assert_eq!(target(&report, "next")["state"], "finished", "{}", o.stderr);
    assert_eq!(target(&report, "long")["attempts"], 2);
}

#[test]
fn a_shard_directory_from_elsewhere_with_absurd_or_broken_records_is_refused_or_read_without_panic()
{
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"memcheck\"]",
        &[T("a", "clean", "exit 0", "")],
    );
    let out = tmp.path().join("night");
    assert_eq!(run(sweep_cmd(&file, &out, &[])).code, 0);
    let merge = || {
        let mut cmd = cudawatch();
        cmd.args(["merge", "--format", "json"]).arg(&out);
        run(cmd)
    };
    // A run's report cut in half: the target is incomplete, not a panic.
    let report = out.join("targets/a/attempt-1/report.json");
    let text = std::fs::read(&report).unwrap();
    std::fs::write(&report, &text[..text.len() / 2]).unwrap();
    std::fs::remove_file(out.join("targets/a/attempt-1.json")).unwrap();
    let o = merge();
    assert_eq!(o.code, 3, "{}", o.stderr);
    let merged: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(target(&merged, "a")["state"], "incomplete");
    // A manifest that claims four billion shards: one line, at once.
    let manifest = out.join("shards/0-of-1.json");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("\"count\": 1", "\"count\": 4000000000");
    std::fs::write(&manifest, text).unwrap();
    let o = merge();
    assert_eq!(o.code, 4);
    assert!(
        o.stderr
            .contains("names shard 0/4000000000, which no sweep writes"),
        "{}",
        o.stderr
    );
    assert_eq!(o.stderr.trim().lines().count(), 1);
}

/// A sweep in `dir` of one target, `sh a.sh`, run once and finished
/// clean: its file and its folder.
fn one_script_sweep(dir: &Path) -> (PathBuf, PathBuf) {
    let file = dir.join("sweep.toml");
    std::fs::write(
        &file,
        format!(
            "[defaults]\nstages = [\"plain\"]\nrun-args = [\"--grace\", \"0.5\"]\n\n\
             [[target]]\nname = \"a\"\ncommand = [\"sh\", \"a.sh\"]\nenv = {{ FAKE_CASE = \"{}\" }}\n",
            sample("clean").display()
        ),
    )
    .unwrap();
    let out = dir.join("night");
    let first = run(sweep_cmd(&file, &out, &[]));
    assert_eq!(first.code, 0, "{}", first.stderr);
    (file, out)
}

#[test]
fn a_resumed_sweep_checks_again_a_target_whose_sourced_script_changed_and_not_for_its_outputs() {
    // The command names a.sh; the bug lands in lib.sh, which a.sh sources:
    // the resume reused the clean result, as docs/sweeps.md promises never.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("a.sh"),
        ". ./lib.sh\necho step >> train.log\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("lib.sh"), "true\n").unwrap();
    let (file, out) = one_script_sweep(tmp.path());
    // What the target wrote beside its code (train.log) and the sweep's own
    // folder change nothing: a resume reuses the result, and says so.
    let same = run(sweep_cmd(&file, &out, &[]));
    assert!(
        same.stderr
            .contains("resuming: 1 of 1 targets finished earlier"),
        "{}",
        same.stderr
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(
        tmp.path().join("lib.sh"),
        "echo 'RuntimeError: CUDA error: an illegal memory access was encountered' >&2\nexit 1\n",
    )
    .unwrap();
    let again = run(sweep_cmd(&file, &out, &[]));
    assert!(
        again
            .stderr
            .contains("again a: its command or files changed since attempt 1"),
        "{}",
        again.stderr
    );
    assert_eq!(again.code, 1, "{}", again.stderr);
}

#[test]
fn a_resumed_sweep_checks_again_a_target_whose_script_changed() {
    // Before: target `a` finished clean, its script was changed to fail,
    // and the resumed sweep reused the old result: CLEAN, all as expected.
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("a.sh");
    std::fs::write(&script, "exit 0\n").unwrap();
    let (file, out) = one_script_sweep(tmp.path());
    std::fs::write(
        &script,
        "echo 'RuntimeError: CUDA error: an illegal memory access was encountered' >&2\nexit 1\n",
    )
    .unwrap();
    // A resume runs it again, and its new failure counts.
    let again = run(sweep_cmd(&file, &out, &[]));
    assert!(
        again
            .stderr
            .contains("again a: its command or files changed since attempt 1"),
        "{}",
        again.stderr
    );
    let report = read_json(&out.join("report.json"));
    let a = target(&report, "a");
    assert_eq!(a["attempts"], 2, "{a}");
    assert_eq!(a["state"], "finished", "{a}");
    assert_eq!(again.code, 1, "{}", again.stderr);
}

#[test]
fn a_second_sweep_into_a_busy_directory_is_refused_and_no_target_runs_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"plain\"]",
        &[T("slow", "clean", "sleep 2; exit 0", "")],
    );
    let out = tmp.path().join("night");
    let spawn = || {
        sweep_cmd(&file, &out, &[])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn();
    std::thread::sleep(Duration::from_millis(500));
    let second = crate::helpers::finish(spawn());
    let first = crate::helpers::finish(first);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(second.code, 4, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("another cudawatch sweep is running shard 0/1"),
        "{}",
        second.stderr
    );
    assert_eq!(runs_of(tmp.path(), "slow"), 1);
}

#[test]
fn a_shard_whose_manifest_claims_another_shards_target_is_refused() {
    // Before: shard 1's manifest claiming shard 0's failing target, with a
    // clean attempt of it in shard 1, hid the findings: CLEAN, in either
    // argument order.
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"memcheck\"]",
        &[
            T("bad", "oob_write", "exit 0", "expect = \"findings\""),
            T("good", "clean", "exit 0", ""),
        ],
    );
    let shards: Vec<PathBuf> = (0..2)
        .map(|i| tmp.path().join(format!("shard-{i}")))
        .collect();
    for (i, dir) in shards.iter().enumerate() {
        let mut cmd = sweep_cmd(&file, dir, &[]);
        cmd.env("SLURM_ARRAY_TASK_ID", i.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", "2");
        assert_eq!(run(cmd).code, 0);
    }
    // The shard that ran `good` now also claims `bad`.
    let (claimer, claimed) = if shards[1].join("targets/good").is_dir() {
        (&shards[1], "1-of-2")
    } else {
        (&shards[0], "0-of-2")
    };
    let manifest_path = claimer.join("shards").join(format!("{claimed}.json"));
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    manifest["targets"] = serde_json::json!(["good", "bad"]);
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    for order in [[&shards[0], &shards[1]], [&shards[1], &shards[0]]] {
        let o = run(cudawatch()
            .arg("merge")
            .args(order)
            .args(["--format", "json"]));
        assert_eq!(o.code, 4, "{}", o.stderr);
        assert!(
            o.stderr.contains("target \"bad\" is claimed by shards"),
            "{}",
            o.stderr
        );
    }
}

#[test]
fn a_budget_of_zero_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(tmp.path(), "[\"plain\"]", &[T("a", "clean", "exit 0", "")]);
    let out = tmp.path().join("night");
    let o = run(sweep_cmd(&file, &out, &["--budget", "0"]));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("would start no target"), "{}", o.stderr);
    assert!(!out.exists(), "nothing was made");
}

#[test]
fn a_missing_tool_is_warned_about_only_for_the_targets_that_use_it() {
    // Every target runs `plain` alone: a missing compute-sanitizer or ncu
    // costs them nothing, and the warning was noise.
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"plain\"]",
        &[T("a", "clean", "exit 0", ""), T("b", "clean", "exit 0", "")],
    );
    let mut cmd = sweep_cmd(&file, &tmp.path().join("out"), &[]);
    cmd.env_remove("CUDAWATCH_COMPUTE_SANITIZER")
        .env_remove("CUDAWATCH_NCU")
        .env("PATH", "/usr/bin:/bin")
        .env_remove("CUDA_HOME");
    let out = run(cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stderr.contains("will be inconclusive"),
        "{}",
        out.stderr
    );
    // One target of two needs ncu: said for it alone.
    let file = sweep_file(
        tmp.path(),
        "[\"plain\"]",
        &[
            T("a", "clean", "exit 0", ""),
            T("b", "clean", "exit 0", "stages = [\"plain\", \"ncu\"]"),
        ],
    );
    let mut cmd = sweep_cmd(&file, &tmp.path().join("out2"), &[]);
    cmd.env_remove("CUDAWATCH_COMPUTE_SANITIZER")
        .env_remove("CUDAWATCH_NCU")
        .env("PATH", "/usr/bin:/bin")
        .env_remove("CUDA_HOME");
    let out = run(cmd);
    assert!(
        out.stderr
            .contains("1 target's ncu stage will be inconclusive"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("memcheck, racecheck"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_report_edited_clean_with_its_digest_removed_is_held_to_its_runs_exit_code() {
    // The report of `bad` edited to hold no finding, and the digest the
    // sweep kept of it removed from its record: merged CLEAN, the record's
    // exit code 1 ignored.
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"plain\"]",
        &[T("bad", "clean", ILLEGAL_ACCESS, "")],
    );
    let out = tmp.path().join("night");
    let first = run(sweep_cmd(&file, &out, &[]));
    assert_eq!(first.code, 1, "{}", first.stderr);
    let report_path = out.join("targets/bad/attempt-1/report.json");
    let mut edited: Value = read_json(&report_path);
    edited["findings"] = serde_json::json!([]);
    for stage in edited["stages"].as_array_mut().unwrap() {
        stage["outcome"] = "clean".into();
    }
    std::fs::write(&report_path, edited.to_string()).unwrap();
    let record_path = out.join("targets/bad/attempt-1.json");
    let mut record: Value = read_json(&record_path);
    record.as_object_mut().unwrap().remove("report_digest");
    assert_eq!(record["exit_code"], 1);
    std::fs::write(&record_path, record.to_string()).unwrap();
    merged_incomplete(&out, "bad", "holds no finding, where its run exited 1");
}

#[test]
fn a_report_swapped_after_its_run_is_not_trusted_by_merge_and_a_resume_checks_again() {
    // The run of `bad` found an illegal access (its attempt exited 1);
    // its report.json, replaced by the clean report of `good`, made the
    // merged sweep CLEAN: the recorded exit code was never compared with
    // the report.
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"plain\"]",
        &[
            T("good", "clean", "exit 0", ""),
            T("bad", "clean", ILLEGAL_ACCESS, ""),
        ],
    );
    let out = tmp.path().join("night");
    let first = run(sweep_cmd(&file, &out, &[]));
    assert_eq!(first.code, 1, "{}", first.stderr);
    std::fs::copy(
        out.join("targets/good/attempt-1/report.json"),
        out.join("targets/bad/attempt-1/report.json"),
    )
    .unwrap();
    merged_incomplete(&out, "bad", "not the one its run left");
    // A resume runs it again; `good`, untouched, is not.
    let again = run(sweep_cmd(&file, &out, &[]));
    assert!(
        again.stderr.contains("again bad:") && !again.stderr.contains("again good:"),
        "{}",
        again.stderr
    );
    assert_eq!(
        again.code, 1,
        "the new run's finding counts: {}",
        again.stderr
    );
}

#[test]
fn a_target_of_several_gpus_gets_them_and_one_gpu_targets_keep_one_each() {
    // A sweep pinned every target to one GPU, so a torchrun target's rank
    // 1 found no GPU of its own (cudaErrorInvalidDevice on the H100s).
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let seen = tmp.path().join("seen");
    let torchrun = bin.join("torchrun");
    std::fs::write(
        &torchrun,
        format!(
            "#!/bin/sh\necho \"torchrun $CUDA_VISIBLE_DEVICES\" >> '{}'\n",
            seen.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&torchrun, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = tmp.path().join("sweep.toml");
    std::fs::write(
        &file,
        format!(
            "[defaults]\nstages = [\"plain\"]\nrun-args = [\"--grace\", \"0.5\"]\n\n\
             [[target]]\nname = \"ddp\"\ncommand = [\"torchrun\", \"--nproc_per_node=2\", \"t.py\"]\n\n\
             [[target]]\nname = \"a\"\ncommand = [\"sh\", \"-c\", \"echo a $CUDA_VISIBLE_DEVICES >> '{seen}'\"]\n\n\
             [[target]]\nname = \"b\"\ncommand = [\"sh\", \"-c\", \"echo b $CUDA_VISIBLE_DEVICES >> '{seen}'\"]\n",
            seen = seen.display()
        ),
    )
    .unwrap();
    let out = tmp.path().join("night");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = run(sweep_cmd(&file, &out, &["--gpus", "0,1"]).env("PATH", path));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let report = read_json(&out.join("report.json"));
    assert_eq!(target(&report, "ddp")["gpu"], "0,1", "{report}");
    for one in ["a", "b"] {
        let gpu = target(&report, one)["gpu"].as_str().unwrap().to_string();
        assert!(gpu == "0" || gpu == "1", "{one}: {gpu}");
    }
    let seen = std::fs::read_to_string(&seen).unwrap();
    assert!(seen.contains("torchrun 0,1"), "{seen}");
}

#[test]
fn a_sweeps_clean_says_the_stages_its_sweep_file_left_out() {
    // Before: "CLEAN: the 1 target clean and as expected" for a sweep file
    // whose `stages` ran memcheck alone; the target's own CLEAN said
    // "not run (--stages): racecheck, ...", the sweep's nothing.
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(
        tmp.path(),
        "[\"plain\", \"memcheck\"]",
        &[T("a", "clean", "exit 0", "")],
    );
    let out = run(sweep_cmd(&file, &tmp.path().join("night"), &[]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let verdict = out
        .stderr
        .lines()
        .find(|l| l.starts_with("CLEAN:"))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    assert!(
        verdict.contains("not run: racecheck, initcheck, synccheck, csan, memory, ncu in 1 target"),
        "{verdict}"
    );
}

#[test]
fn a_baseline_or_history_larger_than_any_real_one_is_refused_before_it_is_read() {
    // docs/untrusted-input.md: an earlier sweep's report over 64 MiB and a
    // history over 256 MiB are refused, never parsed (a report takes about
    // 15 times its size once parsed).
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_clean_night(tmp.path());
    let sparse = |name: &str, head: &str, size: u64| {
        let path = tmp.path().join(name);
        std::fs::write(&path, head).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(size)
            .unwrap();
        path
    };
    let baseline = sparse(
        "old.json",
        "{\"schema_version\": 1, \"targets\": [",
        65 << 20,
    );
    let history = sparse("history.jsonl", "{\"date\": \"2026-11-01\"}\n", 257 << 20);
    for (flag, path, limit) in [
        ("--baseline", &baseline, 64u64 << 20),
        ("--history", &history, 256 << 20),
    ] {
        let started = std::time::Instant::now();
        let out = run(cudawatch().arg("merge").arg(&dir).arg(flag).arg(path));
        assert_eq!(out.code, 4, "{flag}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr
                .contains(&format!("more than the {limit} cudawatch reads")),
            "{flag}: {}",
            out.stderr
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{flag}: read first?"
        );
    }
}

#[test]
fn a_sweep_directorys_own_sweep_file_is_read_only_as_a_bounded_regular_file() {
    // docs/untrusted-input.md: `merge` reads a shard's sweep.toml only as a
    // regular file of at most 16 MiB; a directory from elsewhere may hold a
    // FIFO (which would be waited on forever) or a huge file there.
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_clean_night(tmp.path());
    let copy = dir.join("sweep.toml");
    for (what, why) in [
        ("17 MiB", "more than the 16777216 cudawatch reads"),
        ("a FIFO", "not a regular file"),
    ] {
        std::fs::remove_file(&copy).unwrap();
        if what == "a FIFO" {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &copy,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
        } else {
            std::fs::write(&copy, "").unwrap();
            std::fs::OpenOptions::new()
                .write(true)
                .open(&copy)
                .unwrap()
                .set_len(17 << 20)
                .unwrap();
        }
        let started = std::time::Instant::now();
        let out = run(cudawatch().arg("merge").arg(&dir));
        assert_eq!(out.code, 4, "{what}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(why), "{what}: {}", out.stderr);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{what}: waited on it"
        );
    }
}

/// A sweep in `tmp` of one target that exits 0, run once: its folder.
fn one_clean_night(tmp: &Path) -> PathBuf {
    let file = tmp.join("sweep.toml");
    std::fs::write(
        &file,
        "[defaults]\nstages = [\"plain\"]\nrun-args = [\"--grace\", \"0.5\"]\n\n\
         [[target]]\nname = \"good\"\ncommand = [\"sh\", \"-c\", \"exit 0\"]\n",
    )
    .unwrap();
    let dir = tmp.join("night");
    let out = run(cudawatch()
        .arg("sweep")
        .arg(&file)
        .arg("--out-dir")
        .arg(&dir));
    assert_eq!(out.code, 0, "{}", out.stderr);
    dir
}
