//! First contact, second round (issue 22): words that fit an 80-column
//! terminal, mistakes that get the right tip, wrong files that name the
//! command that reads them, and nothing said twice.

use std::path::Path;

use crate::helpers::{cudawatch, read_json, root, run, sample};

/// Display columns of a line: every character cudawatch prints (box
/// drawing, `…`, `×`, `µ`) takes one.
fn columns(line: &str) -> usize {
    line.chars().count()
}

fn assert_fits(what: &str, text: &str, width: usize) {
    for line in text.lines() {
        assert!(
            columns(line) <= width,
            "{what}: {} columns at {width}: {line}\n{text}",
            columns(line)
        );
    }
}

/// A PATH with the system's programs and no CUDA tools.
fn no_tools(cmd: &mut std::process::Command, dir: &Path) {
    cmd.env("PATH", "/usr/bin:/bin")
        .env("CUDA_HOME", dir.join("no-cuda"))
        .current_dir(dir);
}

#[test]
fn every_line_fits_80_columns_and_no_identifier_or_file_line_is_split() {
    // Before: prose and tables broke mid-word at 80 columns ("oob_writ" /
    // "e", "…/gpu/coale" / "scing.cu:12", "400" / "0-byte allocation").
    for case in ["oob_write", "coalescing", "torch_train_clean", "smem_race"] {
        let path = root().join(format!("docs/examples/{case}.report.json"));
        let out = run(cudawatch().env("COLUMNS", "80").arg("report").arg(&path));
        assert_fits(case, &out.stdout, 80);
        let report = read_json(&path);
        for site in report["findings"].as_array().unwrap() {
            if let (Some(file), Some(line)) = (
                site["location"]["file"].as_str(),
                site["location"]["line"].as_u64(),
            ) {
                let name = file.rsplit('/').next().unwrap();
                assert!(
                    out.stdout.contains(&format!("{name}:{line}")),
                    "{case}: {name}:{line} split or missing:\n{}",
                    out.stdout
                );
            }
        }
        for stage in report["stages"].as_array().unwrap() {
            let tool = stage["tool"].as_str().unwrap();
            // A stage nothing called for (no device exception, no core
            // dump) is left out of the table.
            if stage["reason"].as_str().unwrap().starts_with("not needed:") {
                continue;
            }
            assert!(
                out.stdout.lines().any(|l| l.contains(&format!(" {tool} "))),
                "{case}: stage {tool} split:\n{}",
                out.stdout
            );
        }
    }
    // Every committed report, the real corpus's among them: no line over
    // 80, the coalescing table a table (not a list) of at most 20 launches.
    let mut reports: Vec<std::path::PathBuf> = Vec::new();
    for dir in ["docs/examples", "docs/examples/real"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.to_string_lossy().ends_with(".report.json") {
                reports.push(path);
            }
        }
    }
    assert!(reports.len() > 20);
    for path in &reports {
        let out = run(cudawatch().env("COLUMNS", "80").arg("report").arg(path));
        assert_fits(&path.display().to_string(), &out.stdout, 80);
        if let Some(at) = out
            .stdout
            .find("Global-memory coalescing per kernel launch")
        {
            let section = &out.stdout[at..];
            let next = section.lines().nth(1).unwrap_or_default();
            assert!(next.starts_with('┌'), "{}: {next}", path.display());
        }
    }
    let resnet = run(cudawatch()
        .env("COLUMNS", "80")
        .arg("report")
        .arg(root().join("docs/examples/real/resnet_step.report.json")));
    assert!(
        resnet
            .stdout
            .contains("… 70 more launches, less wasteful, in the JSON and HTML reports"),
        "{}",
        resnet.stdout
    );
    // The other commands' prose too.
    let example = root().join("docs/examples/oob_write.report.json");
    for (what, args) in [
        ("explain", vec!["explain", "700"]),
        ("explain a kind", vec!["explain", "invalid_access"]),
        ("doctor", vec!["doctor", "--quick"]),
        ("config", vec!["config"]),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let mut cmd = cudawatch();
        no_tools(&mut cmd, tmp.path());
        let out = run(cmd.env("COLUMNS", "80").args(args));
        assert_fits(what, &out.stdout, 80);
        assert_fits(what, &out.stderr, 80);
    }
    let diff = run(cudawatch()
        .env("COLUMNS", "80")
        .arg("diff")
        .arg(
            sample("oob_write")
                .join("memcheck.xml")
                .with_extension("none"),
        )
        .arg(&example));
    assert_fits("diff error", &diff.stderr, 80);
    let diff = run(cudawatch()
        .env("COLUMNS", "80")
        .arg("diff")
        .arg(&example)
        .arg(&example));
    assert_fits("diff", &diff.stdout, 80);
}

#[test]
fn the_committed_first_use_capture_has_no_line_over_its_80_columns() {
    // Before: captured with `tmux capture-pane -J`, which joined the lines
    // the terminal had wrapped: 17 lines were longer than the terminal.
    let text = std::fs::read_to_string(root().join("docs/first-use.txt")).unwrap();
    assert!(text.contains("INCONCLUSIVE"), "the run is in it");
    assert_fits("docs/first-use.txt", &text, 80);
    let script = std::fs::read_to_string(root().join("scripts/capture-first-use.sh")).unwrap();
    assert!(!script.contains(" -J"), "lines must not be joined");
}

#[test]
fn without_the_tools_the_remedy_is_said_once_and_referred_to_after() {
    // Before: "compute-sanitizer was not found on PATH ..." on 18 lines.
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = cudawatch();
    no_tools(&mut cmd, tmp.path());
    let out = run(cmd
        .env("COLUMNS", "80")
        .args(["run", "--", "python3", "-c", "print(1)"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_fits("run without tools", &out.stderr, 80);
    let joined = out.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    for remedy in [
        "install the CUDA toolkit or pass --compute-sanitizer / CUDAWATCH_COMPUTE_SANITIZER",
        "install Nsight Compute or pass --ncu / CUDAWATCH_NCU",
    ] {
        assert_eq!(
            joined.matches(remedy).count(),
            1,
            "{remedy}:\n{}",
            out.stderr
        );
    }
    assert!(joined.contains("memcheck: see [1] above"), "{}", out.stderr);
    assert!(
        out.stderr.contains("said above: GPUs visible"),
        "the environment's problems are not repeated: {}",
        out.stderr
    );
    let report = &out.stderr[out.stderr.find("cudawatch: python3").unwrap()..];
    let lines = report.lines().count();
    // 72: the stage not needed (coredump) takes its two lines under the table.
    assert!(lines <= 72, "{lines} lines:\n{report}");
}

#[test]
fn a_program_without_double_dash_and_a_negative_value_get_the_right_tip() {
    let out = run(cudawatch().args([
        "run", "--stages", "plain", "python", "train.py", "--lr", "3",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("tip: the program goes after `--`: cudawatch run --stages plain -- python train.py --lr 3"),
        "{}",
        out.stderr
    );
    let out = run(cudawatch().args(["run", "--timeout", "-5", "--", "true"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`-5` was read as a flag, not as the value of --timeout"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("use '-- -5'"), "{}", out.stderr);
}

#[test]
fn time_limits_take_units_and_a_limit_of_zero_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(cudawatch().current_dir(tmp.path()).args([
        "config",
        "--format",
        "json",
        "--timeout",
        "10m",
        "--plain-timeout",
        "2h",
        "--grace",
        "30s",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let settings = crate::helpers::json(&out)["settings"].clone();
    let value = |name: &str| {
        settings
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["setting"] == name)
            .unwrap()["value"]
            .clone()
    };
    assert_eq!(value("timeout"), "10m");
    assert_eq!(value("plain-timeout"), "2h");
    let out = run(cudawatch().current_dir(tmp.path()).args([
        "run",
        "--stages",
        "plain",
        "--timeout",
        "10m",
        "--plain-timeout",
        "2h",
        "--grace",
        "30s",
        "--out-dir",
        "r",
        "--",
        "true",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(cudawatch().args(["run", "--plain-timeout", "0", "--", "true"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("would stop the stage at once"),
        "{}",
        out.stderr
    );
}

#[test]
fn wrong_files_name_the_flag_or_the_command_that_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let report = |path: &Path| run(cudawatch().current_dir(tmp.path()).arg("report").arg(path));
    let out = report(Path::new("nope.json"));
    assert_eq!(out.code, 4);
    assert!(
        out.stderr.contains("nope.json: no such file or directory")
            && !out.stderr.contains("run.json"),
        "{}",
        out.stderr
    );
    let captures = sample("oob_write");
    let out = report(&captures);
    assert!(out.stderr.contains("use cudawatch parse"), "{}", out.stderr);
    let out = report(&captures.join("memcheck.xml"));
    assert!(out.stderr.contains("cudawatch parse"), "{}", out.stderr);

    // A sweep's own report: merge renders it.
    let file = tmp.path().join("night.toml");
    std::fs::write(&file, "[[target]]\nname = \"t\"\ncommand = [\"true\"]\n").unwrap();
    let mut sweep = cudawatch();
    no_tools(&mut sweep, tmp.path());
    let out = run(sweep.arg("sweep").arg(&file).args(["--out-dir", "night"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .find("warning: compute-sanitizer was not found")
            .unwrap()
            < out.stderr.find("start t").unwrap(),
        "a sweep says a missing tool before the first target: {}",
        out.stderr
    );
    // Its JSON report is rendered as the sweep it is (it pointed to
    // `merge .`, which fails on a file's folder), with the sweep's exit.
    let out = report(&tmp.path().join("night/report.json"));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stdout.contains("Targets (1)")
            && out
                .stdout
                .contains("INCONCLUSIVE: 1 of 1 targets not fully checked: t")
            && !out.stderr.contains("cudawatch merge"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let out = report(&tmp.path().join("night"));
    assert!(out.stderr.contains("cudawatch merge"), "{}", out.stderr);

    // A flag's file names the flag.
    let example = root().join("docs/examples/oob_write.report.json");
    let out = run(cudawatch()
        .current_dir(tmp.path())
        .arg("report")
        .arg(&example)
        .args(["--baseline", "nope.json"]));
    assert!(
        out.stderr.contains("cannot read --baseline nope.json"),
        "{}",
        out.stderr
    );

    // A script saved without its executable bit.
    std::fs::write(tmp.path().join("train.py"), "print(1)\n").unwrap();
    let out = run(cudawatch()
        .current_dir(tmp.path())
        .args(["run", "--", "./train.py"]));
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "not executable: chmod +x ./train.py or run it with python3: cudawatch run -- python3 ./train.py"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn parse_reads_stdin_from_dash_and_pairs_each_log_with_its_own_xml() {
    let oob = sample("oob_write");
    let log = std::fs::read(oob.join("memcheck.stdout")).unwrap();
    let mut cmd = cudawatch();
    cmd.args(["parse", "--format", "json", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &log).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["kind"] == "invalid_access"),
        "{report}"
    );

    // Two memcheck runs in one folder, only one with its log: the log is
    // the one of its own name, not the first XML in name order.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        sample("clean").join("memcheck.xml"),
        tmp.path().join("memcheck-a.xml"),
    )
    .unwrap();
    std::fs::copy(oob.join("memcheck.xml"), tmp.path().join("memcheck-b.xml")).unwrap();
    std::fs::copy(
        oob.join("memcheck.stdout"),
        tmp.path().join("memcheck-b.stdout"),
    )
    .unwrap();
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(tmp.path()));
    let report = crate::helpers::json(&out);
    let warnings = report["warnings"].to_string();
    assert!(
        !warnings.contains("memcheck-a"),
        "the clean XML is not judged by the other run's log: {warnings}"
    );
}

#[test]
fn a_ctrl_c_is_not_a_finding_in_the_users_code() {
    // Before: the KeyboardInterrupt that cudawatch's own SIGINT raised in
    // the program was a python_exception at the user's line.
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("step.py");
    std::fs::write(
        &script,
        "import time, os, signal\nos.kill(os.getppid(), signal.SIGINT)\ntime.sleep(30)\n",
    )
    .unwrap();
    let out = run(cudawatch().current_dir(tmp.path()).args([
        "run",
        "--stages",
        "plain",
        "--out-dir",
        "r",
        "--",
        "python3",
        "step.py",
    ]));
    assert_eq!(out.code, 130, "{}", out.stderr);
    let report = read_json(&tmp.path().join("r/report.json"));
    assert_eq!(report["findings"].as_array().unwrap().len(), 0, "{report}");
    assert!(
        std::fs::read_to_string(tmp.path().join("r/plain/stderr"))
            .unwrap()
            .contains("KeyboardInterrupt"),
        "the program did raise it"
    );
}

#[test]
fn a_broken_config_file_above_does_not_stop_explain_or_doctor() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("cudawatch.toml"), "fail_on = \"error\"\n").unwrap();
    let below = tmp.path().join("work");
    std::fs::create_dir(&below).unwrap();
    let out = run(cudawatch().current_dir(&below).args(["explain", "700"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("cudaErrorIllegalAddress"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("did you mean `fail-on`?")
            && out.stderr.contains("going on without it"),
        "{}",
        out.stderr
    );
    let out = run(cudawatch().current_dir(&below).args(["report", "x.json"]));
    assert_eq!(
        out.code, 4,
        "a command that takes its settings still stops: {}",
        out.stderr
    );
}

#[test]
fn help_examples_fit_80_columns_and_man_names_every_subcommand() {
    for sub in [
        "", "run", "doctor", "explain", "parse", "report", "diff", "sweep", "merge", "suppress",
        "config",
    ] {
        let mut cmd = cudawatch();
        cmd.env("COLUMNS", "80");
        if !sub.is_empty() {
            cmd.arg(sub);
        }
        let out = run(cmd.arg("--help"));
        assert_fits(sub, &out.stdout, 80);
        let lines: Vec<&str> = out.stdout.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim_start().starts_with("Example:") {
                assert!(
                    lines.get(i + 1).is_none_or(|l| l.trim().is_empty()),
                    "{sub}: an example split over two lines: {line}"
                );
            }
        }
    }
    let out = run(cudawatch().args(["man", "nosuch"]));
    for sub in [
        "run",
        "doctor",
        "explain",
        "sweep",
        "merge",
        "diff",
        "completions",
    ] {
        assert!(out.stderr.contains(sub), "{sub}: {}", out.stderr);
    }
}

#[test]
fn explain_on_a_terminal_says_what_it_waits_for() {
    // Before: `cudawatch explain` with no argument waited on the terminal
    // in silence. util-linux's `script` gives it a terminal as stdin (at
    // once at end of input, as Ctrl-D would).
    crate::helpers::require_tool("script (util-linux)", Path::new("/usr/bin/script"));
    let bin = env!("CARGO_BIN_EXE_cudawatch");
    let out = run(std::process::Command::new("/usr/bin/script")
        .args(["-qec", &format!("{bin} explain"), "/dev/null"])
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null()));
    assert!(
        out.stdout
            .contains("paste the error message or traceback, then press Ctrl-D"),
        "{}{}",
        out.stdout,
        out.stderr
    );
    // From a pipe it reads at once, without the prompt.
    let mut piped = cudawatch();
    piped
        .arg("explain")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = piped.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"700\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("paste the error"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("cudaErrorIllegalAddress"));
}

#[test]
fn a_closed_stderr_is_never_a_panic() {
    // Before: `cudawatch run ... 2>&1 | head -1` exited 101 (a panic in
    // eprintln!) once head had gone; `report` already handled it.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("night.toml");
    std::fs::write(&file, "[[target]]\nname = \"t\"\ncommand = [\"true\"]\n").unwrap();
    let commands: [&[&str]; 2] = [
        &[
            "run",
            "--stages",
            "plain,memcheck",
            "--out-dir",
            "r",
            "--",
            "true",
        ],
        &["sweep", "night.toml", "--out-dir", "night"],
    ];
    for args in commands {
        let mut cmd = cudawatch();
        no_tools(&mut cmd, tmp.path());
        let mut child = cmd
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(3), "{args:?}: {status}");
    }
}

#[test]
fn at_60_columns_the_stages_are_a_list_that_fits() {
    // The stages table kept its five columns at 60: "why" was 11
    // characters wide and each stage took 5 to 7 lines.
    let out = run(cudawatch()
        .env("COLUMNS", "60")
        .arg("report")
        .arg(root().join("docs/examples/oob_write.report.json")));
    assert_fits("report at 60 columns", &out.stdout, 60);
    assert!(
        out.stdout
            .contains("  memcheck: findings (exit 86, 1.1s)\n    24 errors reported"),
        "{}",
        out.stdout
    );
    let stages = &out.stdout
        [out.stdout.find("Stages").unwrap()..out.stdout.find("Findings by site").unwrap()];
    assert!(stages.lines().count() <= 30, "{stages}");
}
