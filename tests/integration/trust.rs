//! Untrusted input and reused places: a run only reads what it wrote, a run
//! directory from someone else cannot hang or flood cudawatch, and nothing
//! cudawatch writes follows a planted symlink.

use std::process::Command;

use crate::helpers::{cudawatch, read_json, run};
use crate::run::fake_run;

#[test]
fn a_second_run_into_a_used_directory_is_refused_and_the_first_report_kept() {
    // Before: run 2 read run 1's memcheck.xml as its own and said clean.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let first = run(fake_run("oob_write", &dir, "memcheck", &[]));
    assert_eq!(first.code, 1, "{}", first.stderr);
    let report_before = std::fs::read(dir.join("report.json")).unwrap();
    let second = run(fake_run("clean", &dir, "memcheck", &[]).env("FAKE_MODE", "no-xml"));
    assert_eq!(second.code, 4, "{}", second.stderr);
    let line = second
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap();
    assert!(
        line.contains("is not empty") && line.contains("--out-dir"),
        "{line}"
    );
    assert_eq!(
        std::fs::read(dir.join("report.json")).unwrap(),
        report_before
    );
}

#[test]
fn two_runs_started_at_once_into_one_directory_cannot_both_have_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let spawn = || {
        fake_run("clean", &dir, "plain", &[])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let codes = [
        crate::helpers::finish(a).code,
        crate::helpers::finish(b).code,
    ];
    assert!(codes.contains(&0) && codes.contains(&4), "{codes:?}");
}

#[test]
fn runs_started_in_the_same_second_get_directories_of_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    // Started together, so that they share a second.
    let children: Vec<_> = (0..3)
        .map(|_| {
            cudawatch()
                .current_dir(tmp.path())
                .args(["run", "--stages", "plain", "--", "true"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = crate::helpers::finish(child);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let dirs: Vec<_> = std::fs::read_dir(tmp.path().join("cudawatch-runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert_eq!(dirs.len(), 3, "{dirs:?}");
    // The runs never show up in the user's `git status`.
    let ignore = std::fs::read_to_string(tmp.path().join("cudawatch-runs/.gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "*"), "{ignore}");
    for dir in &dirs {
        // 20261122-172000-true, readable and sortable
        assert!(dir.len() >= 20 && dir.as_bytes()[8] == b'-', "{dir}");
    }
}

#[test]
fn a_run_directory_with_a_fifo_or_a_device_cannot_hang_or_flood_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(fake_run("oob_write", &dir, "plain,memcheck", &[]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    // Someone replaces the artifacts: a FIFO nobody writes, and /dev/zero.
    let stdout = dir.join("memcheck/stdout");
    std::fs::remove_file(&stdout).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&stdout)
            .status()
            .unwrap()
            .success()
    );
    let stderr = dir.join("plain/stderr");
    std::fs::remove_file(&stderr).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &stderr).unwrap();
    let started = std::time::Instant::now();
    let again = run(cudawatch().arg("report").arg(&dir));
    assert!(started.elapsed().as_secs() < 20, "no hang, no flood");
    assert!(matches!(again.code, 1 | 3), "{}", again.stderr);
    // The XML still holds the finding; the refused files gave nothing.
    assert!(again.stdout.contains("invalid_access"), "{}", again.stdout);
}

#[test]
fn a_planted_symlink_in_the_run_directory_is_never_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(dir.join("plain")).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("plain/stderr")).unwrap();
    let out = run(fake_run("clean", &dir, "plain", &[]));
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let record = dir.join("run.json");
    assert!(!record.exists() || read_json(&record)["target"].is_array());
}

#[test]
fn parse_reads_a_pipe_once_and_finds_what_is_in_it() {
    // Before: the first 16 KiB went to detection and were lost; the
    // 26-error log parsed as CLEAN, exit 0.
    let log = crate::helpers::sample("oob_write").join("memcheck.stdout");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cat '{}' | '{}' --color never parse /dev/stdin",
            log.display(),
            env!("CARGO_BIN_EXE_cudawatch")
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("invalid_access"), "{stdout}");
}

#[test]
fn parse_takes_a_directory_of_captures_and_fails_first_on_a_missing_file() {
    let case = crate::helpers::sample("oob_write");
    let tmp = tempfile::tempdir().unwrap();
    for name in ["memcheck.xml", "memcheck.stdout"] {
        std::fs::copy(case.join(name), tmp.path().join(name)).unwrap();
    }
    let out = run(cudawatch().arg("parse").arg(tmp.path()));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains("invalid_access"), "{}", out.stdout);
    // A missing file: one line, exit 4, and no report that reads as whole.
    let missing = run(cudawatch()
        .arg("parse")
        .arg(case.join("memcheck.xml"))
        .arg(tmp.path().join("nope.xml")));
    assert_eq!(missing.code, 4, "{}", missing.stderr);
    assert!(!missing.stderr.contains("CLEAN") && !missing.stderr.contains("Findings by site"));
    assert_eq!(
        missing.stderr.trim().lines().count(),
        1,
        "{}",
        missing.stderr
    );
}

#[test]
fn a_suppression_rule_that_names_nothing_is_refused_before_it_hides_everything() {
    // Before: `reason` alone matched every finding: CLEAN, exit 0, no word.
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("suppress.toml");
    std::fs::write(&rules, "[[suppress]]\nreason = \"noise\"\n").unwrap();
    let report = crate::helpers::root().join("docs/examples/oob_write.report.json");
    let out = run(cudawatch()
        .arg("report")
        .arg(&report)
        .arg("--suppressions")
        .arg(&rules));
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("names nothing specific"),
        "{}",
        out.stderr
    );
    for bad in [
        "tool = \"memchek\"",
        "kind = \"leak\"\nexpires = \"2026-02-31\"",
    ] {
        std::fs::write(&rules, format!("[[suppress]]\n{bad}\nreason = \"r\"\n")).unwrap();
        let out = run(cudawatch()
            .arg("report")
            .arg(&report)
            .arg("--suppressions")
            .arg(&rules));
        assert_eq!(out.code, 4, "{bad}: {}", out.stderr);
    }
}

#[test]
fn cudawatch_suppress_writes_a_reason_with_quotes_and_newlines_safely() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("rules.toml");
    let report = crate::helpers::root().join("docs/examples/oob_write.report.json");
    let site = read_json(&report)["findings"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let reason = "tracked in \"BUG-1\"\n[[suppress]]\nreason = \"injected\"";
    let out = run(cudawatch()
        .arg("suppress")
        .arg(&report)
        .arg(&site)
        .args(["--reason", reason, "--file"])
        .arg(&rules));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("does not match"), "{}", out.stderr);
    let text = std::fs::read_to_string(&rules).unwrap();
    let parsed: toml::Table = toml::from_str(&text).unwrap();
    let list = parsed["suppress"].as_array().unwrap();
    assert_eq!(list.len(), 1, "one rule, nothing injected: {text}");
    assert_eq!(list[0]["reason"].as_str(), Some(reason));
    let bad = run(cudawatch()
        .arg("suppress")
        .arg(&report)
        .arg(&site)
        .args(["--reason", "r", "--expires", "2027-02-30", "--file"])
        .arg(&rules));
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

#[test]
fn snippets_are_never_read_from_outside_the_source_root_or_for_a_received_report() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = tmp.path().join("secret.txt");
    std::fs::write(&secret, "l1\nl2\nl3\nl4\nl5\nl6 TOPSECRET\nl7\n").unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // A received report that names the secret and carries no snippet.
    let mut report = read_json(&crate::helpers::root().join("docs/examples/oob_write.report.json"));
    for site in report["findings"].as_array_mut().unwrap() {
        site.as_object_mut().unwrap().remove("snippet");
        site["location"] = serde_json::json!({"file": secret, "line": 6});
    }
    let hostile = tmp.path().join("hostile.json");
    std::fs::write(&hostile, report.to_string()).unwrap();
    let out = run(cudawatch()
        .current_dir(&work)
        .arg("report")
        .arg(&hostile)
        .args(["--format", "json", "--source-root", "/"]));
    assert!(!out.stdout.contains("TOPSECRET") && !out.stderr.contains("TOPSECRET"));
    // A capture that names it: outside the working directory, not read...
    let log = std::fs::read_to_string(crate::helpers::sample("oob_write").join("memcheck.stdout"))
        .unwrap()
        .replace("oob_write.cu:6", &format!("{}:6", secret.display()));
    let capture = tmp.path().join("memcheck.stdout");
    std::fs::write(&capture, log).unwrap();
    let parsed = run(cudawatch().current_dir(&work).arg("parse").arg(&capture));
    assert_eq!(parsed.code, 1, "{}", parsed.stderr);
    assert!(!parsed.stdout.contains("TOPSECRET") && !parsed.stderr.contains("TOPSECRET"));
    // ...and not even with --source-root pointing at it: it is no source file.
    let not_source = run(cudawatch()
        .current_dir(&work)
        .arg("parse")
        .arg(&capture)
        .arg("--source-root")
        .arg(tmp.path()));
    assert!(
        !not_source.stdout.contains("TOPSECRET"),
        "{}",
        not_source.stdout
    );
    // A source file is read when the user points --source-root at it.
    let kernel = tmp.path().join("kern.cu");
    std::fs::write(&kernel, "l1\nl2\nl3\nl4\nl5\nl6 VISIBLE\nl7\n").unwrap();
    let log = std::fs::read_to_string(&capture)
        .unwrap()
        .replace(&secret.display().to_string(), &kernel.display().to_string());
    std::fs::write(&capture, log).unwrap();
    let allowed = run(cudawatch()
        .current_dir(&work)
        .arg("parse")
        .arg(&capture)
        .arg("--source-root")
        .arg(tmp.path()));
    assert!(allowed.stdout.contains("VISIBLE"), "{}", allowed.stdout);
}

/// `parse` of the oob_write capture renamed to point at `file`, run in
/// `cwd` with `extra` flags and `$HOME` at `cwd`'s parent: what it printed.
fn parse_naming(cwd: &std::path::Path, file: &str, extra: &[&str]) -> String {
    let home = if cwd.ends_with("home") {
        cwd
    } else {
        cwd.parent().unwrap()
    };
    let log = std::fs::read_to_string(crate::helpers::sample("oob_write").join("memcheck.stdout"))
        .unwrap()
        .replace("oob_write.cu:6", &format!("{file}:6"));
    let capture = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(capture.path(), log).unwrap();
    let out = run(cudawatch()
        .current_dir(cwd)
        .env("HOME", home)
        .arg("parse")
        .arg(capture.path())
        .args(extra));
    format!("{}{}", out.stdout, out.stderr)
}

#[test]
fn snippets_come_only_from_the_users_source_never_hidden_files_links_or_a_home_root() {
    // Before: with the working directory at $HOME, a capture naming
    // ~/.ssh/id_ed25519 put the key in the terminal and the HTML.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let lines = "l1\nl2\nl3\nl4\nl5\nl6 TOPSECRET\nl7\n";
    for dir in [".ssh", ".git/hooks", "elsewhere", "proj"] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519.py"), lines).unwrap();
    std::fs::write(home.join(".git/hooks/pre-commit.py"), lines).unwrap();
    std::fs::write(home.join("elsewhere/k.cu"), lines).unwrap();
    std::fs::write(
        home.join("proj/mine.cu"),
        "l1\nl2\nl3\nl4\nl5\nl6 MINE\nl7\n",
    )
    .unwrap();
    // A link inside the project to source outside it, and to a hidden file.
    std::os::unix::fs::symlink(home.join("elsewhere/k.cu"), home.join("proj/linked.cu")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), home.join("proj/keys")).unwrap();

    // The working directory is the home directory: no snippets at all,
    // and the report says how to get them.
    let at_home = parse_naming(&home, &home.join("proj/mine.cu").display().to_string(), &[]);
    assert!(!at_home.contains("MINE"), "{at_home}");
    assert!(at_home.contains("--source-root"), "{at_home}");
    let root = parse_naming(
        &home,
        &home.join("proj/mine.cu").display().to_string(),
        &["--source-root", "/"],
    );
    assert!(
        !root.contains("MINE") && root.contains("--source-root"),
        "{root}"
    );

    let proj = home.join("proj");
    for named in [
        home.join(".ssh/id_ed25519.py"),
        home.join(".git/hooks/pre-commit.py"),
        proj.join("linked.cu"),
        proj.join("keys/id_ed25519.py"),
        proj.join("../.ssh/id_ed25519.py"),
    ] {
        let shown = parse_naming(
            &home,
            &named.display().to_string(),
            &["--source-root", proj.to_str().unwrap()],
        );
        assert!(!shown.contains("TOPSECRET"), "{}: {shown}", named.display());
    }
    // The project's own source is shown, named absolutely or relatively.
    let mine = parse_naming(&proj, &proj.join("mine.cu").display().to_string(), &[]);
    assert!(mine.contains("MINE"), "{mine}");
    let relative = parse_naming(&proj, "mine.cu", &[]);
    assert!(relative.contains("MINE"), "{relative}");
}

#[test]
fn names_from_tools_cannot_drive_the_terminal_or_forge_a_verdict_or_render_as_markdown() {
    let tmp = tempfile::tempdir().unwrap();
    let mut report = read_json(&crate::helpers::root().join("docs/examples/oob_write.report.json"));
    let site = &mut report["findings"][0];
    site["kernel"] = serde_json::json!("k\u{1b}[2J\u{1b}]0;owned\u{7}\nCLEAN: no errors found");
    site["message"] =
        serde_json::json!("![x](http://evil.example/x.png) [link](http://evil.example) `tick`");
    report["target"] = serde_json::json!(["./app", "\u{1b}[31mred\u{202e}"]);
    let hostile = tmp.path().join("hostile.json");
    std::fs::write(&hostile, report.to_string()).unwrap();
    let out = run(cudawatch()
        .arg("--color")
        .arg("never")
        .arg("report")
        .arg(&hostile)
        .args(["--report", "markdown"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        !out.stderr.contains('\u{1b}') && !out.stderr.contains('\u{7}'),
        "{:?}",
        out.stderr
    );
    assert!(!out.stderr.contains('\u{202e}'));
    assert!(
        !out.stderr
            .lines()
            .any(|l| l.trim_start().starts_with("CLEAN:")),
        "a forged verdict line: {}",
        out.stderr
    );
    assert!(out.stderr.lines().any(|l| l.starts_with("FINDINGS:")));
    assert!(
        !out.stdout.contains("![x](") && !out.stdout.contains("[link]("),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains('\u{1b}'));
}

#[test]
fn out_of_range_numbers_are_one_line_usage_errors_from_flags_environment_and_file() {
    // Before: inf and 1e308 panicked (exit 101), 1e19 panicked after the
    // program had started, nan let a check or the run misbehave.
    for (flag, value) in [
        ("--plain-timeout", "inf"),
        ("--plain-timeout", "1e19"),
        ("--timeout", "nan"),
        ("--timeout", "-1"),
        ("--grace", "1e308"),
        ("--max-wasted-sectors", "nan"),
        ("--min-memory-headroom", "101"),
        ("--max-excess-sectors-per-request", "-inf"),
    ] {
        let out = run(cudawatch().args(["run", &format!("{flag}={value}"), "--", "true"]));
        assert_eq!(out.code, 2, "{flag} {value}: {}", out.stderr);
        assert!(out.stderr.contains(value), "{flag} {value}: {}", out.stderr);
    }
    let env = run(cudawatch()
        .env("CUDAWATCH_GRACE", "inf")
        .args(["run", "--", "true"]));
    assert_eq!(env.code, 2, "{}", env.stderr);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("cudawatch.toml"), "timeout = 1e300\n").unwrap();
    let file = run(cudawatch()
        .current_dir(tmp.path())
        .args(["run", "--", "true"]));
    assert!(matches!(file.code, 2 | 4), "{}", file.stderr);
    assert!(file.stderr.contains("timeout"), "{}", file.stderr);
    assert!(!tmp.path().join("cudawatch-runs").exists(), "nothing ran");
}

#[test]
fn the_remedy_of_a_long_reason_is_never_cut_off_and_a_file_that_cannot_run_is_not_the_tool() {
    let tmp = tempfile::tempdir().unwrap();
    // A non-executable `compute-sanitizer` earlier on PATH is passed over.
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("compute-sanitizer"), "not a program").unwrap();
    let out = run(cudawatch()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("CUDA_HOME", tmp.path().join("no-cuda"))
        .current_dir(tmp.path())
        .args([
            "--color", "never", "run", "--stages", "memcheck", "--", "true",
        ]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "install the CUDA toolkit or pass --compute-sanitizer / CUDAWATCH_COMPUTE_SANITIZER"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("Permission denied"), "{}", out.stderr);
    // Warned up front, before the stages; the remedy said once, in the
    // report, and referred to after.
    let warned = out
        .stderr
        .find("warning: compute-sanitizer not found: memcheck will be inconclusive")
        .expect("warned");
    assert!(warned < out.stderr.find("(1/1)").unwrap(), "{}", out.stderr);
    assert_eq!(
        out.stderr
            .matches("install the CUDA toolkit or pass --compute-sanitizer")
            .count(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn mutated_reports_and_run_directories_never_panic_cudawatch_report() {
    // A small deterministic fuzz through the binary: byte flips, cuts and
    // duplications of a real report and of a real run directory's records.
    let base =
        std::fs::read(crate::helpers::root().join("docs/examples/oob_write.report.json")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..120 {
        let mut bytes = base.clone();
        match next() % 4 {
            0 => {
                let at = (next() as usize) % bytes.len();
                bytes[at] = next() as u8;
            }
            1 => bytes.truncate((next() as usize) % bytes.len()),
            2 => {
                let at = (next() as usize) % bytes.len();
                let tail = bytes[at..].to_vec();
                bytes.extend_from_slice(&tail);
            }
            _ => {
                // Numbers where strings were, and the other way round.
                let text = String::from_utf8_lossy(&bytes)
                    .replacen("\"count\": 24", "\"count\": -1e400", 1)
                    .replacen("\"line\": 6", "\"line\": \"6\"", 1);
                bytes = text.into_bytes();
            }
        }
        let path = tmp.path().join(format!("m{i}.json"));
        std::fs::write(&path, &bytes).unwrap();
        let out = run(cudawatch()
            .arg("report")
            .arg(&path)
            .args(["--report", "sarif=-"]));
        assert!(
            matches!(out.code, 0 | 1 | 3 | 4),
            "case {i}: exit {}: {}",
            out.code,
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "case {i}: {}", out.stderr);
    }
    // A run directory whose records are mangled.
    let dir = tmp.path().join("run");
    let first = run(fake_run("oob_write", &dir, "plain,memcheck", &[]));
    assert_eq!(first.code, 1, "{}", first.stderr);
    for (file, text) in [
        ("run.json", "{\"cudawatch_version\": 1}"),
        (
            "memcheck/stage.json",
            "{\"tool\": \"memcheck\", \"seconds\": \"NaN\"}",
        ),
        (
            "memcheck/memcheck.xml",
            "<ComputeSanitizerOutput><record><kind>",
        ),
    ] {
        let copy = tmp.path().join(format!("copy-{}", file.replace('/', "-")));
        let _ = Command::new("cp").arg("-r").arg(&dir).arg(&copy).status();
        std::fs::write(copy.join(file), text).unwrap();
        let out = run(cudawatch().arg("report").arg(&copy));
        assert!(
            matches!(out.code, 1 | 3 | 4),
            "{file}: exit {}: {}",
            out.code,
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{file}: {}", out.stderr);
        assert!(
            out.stderr.lines().any(|l| l.starts_with("error:"))
                || out
                    .stdout
                    .lines()
                    .any(|l| l.starts_with("FINDINGS") || l.starts_with("INCONCLUSIVE"))
        );
    }
}

#[test]
fn cudawatch_suppress_for_one_leak_hides_that_leak_only_and_the_checklist_says_so() {
    // Before: the rule written for one leak was `tool` + `kind`, which hid
    // every leak of every program, and the checklist then said "found none".
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("rules.toml");
    let dir = tmp.path().join("run");
    let out = run(crate::run::fake_run("leak", &dir, "memcheck", &[]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = read_json(&dir.join("report.json"));
    let site = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "leak")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = run(cudawatch()
        .arg("suppress")
        .arg(dir.join("report.json"))
        .arg(&site)
        .args(["--reason", "freed by the driver", "--file"])
        .arg(&rules));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Named by the function and its program: `main` alone is every
    // program's, and hid every other program's leaks too.
    let written = std::fs::read_to_string(&rules).unwrap();
    assert!(written.contains("frame = \"main@leak\""), "{written}");
    let other = run(cudawatch()
        .args(["parse", "--format", "json", "--suppressions"])
        .arg(&rules)
        .arg(crate::helpers::sample("oob_write").join("memcheck.xml")));
    let other: serde_json::Value = serde_json::from_str(&other.stdout).unwrap();
    let other_leak = crate::helpers::site_of_kind(&other, "leak");
    assert!(other_leak.get("suppressed").is_none(), "{other_leak}");
    let judged = run(cudawatch()
        .args(["report", "--format", "json", "--suppressions"])
        .arg(&rules)
        .arg(&dir));
    assert_eq!(judged.code, 0, "{}", judged.stderr);
    let item = crate::helpers::checklist_item(&crate::helpers::json(&judged), "no_leaks");
    let evidence = item["evidence"].as_str().unwrap();
    assert!(
        !evidence.contains("found none") && evidence.contains("2 leaks accepted"),
        "{item}"
    );
}

#[test]
fn a_frame_rule_of_every_programs_entry_alone_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[suppress]]\nkind = \"leak\"\nframe = \"main\"\nreason = \"ours\"\n",
    )
    .unwrap();
    let out = run(cudawatch()
        .args(["parse", "--suppressions"])
        .arg(&rules)
        .arg(crate::helpers::sample("leak").join("memcheck.xml")));
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("is every program's entry"),
        "{}",
        out.stderr
    );
}

#[test]
fn merge_refuses_a_shard_whose_sweep_file_is_a_fifo_or_dev_zero() {
    // Before: a FIFO hung merge, and a link to /dev/zero was read until
    // memory ran out.
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo-shard");
    std::fs::create_dir(&fifo).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        fifo.join("sweep.toml"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let zero = tmp.path().join("zero-shard");
    std::fs::create_dir(&zero).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero.join("sweep.toml")).unwrap();
    for shard in [&fifo, &zero] {
        let out = run(cudawatch().args(["merge", "--format", "json"]).arg(shard));
        assert_eq!(out.code, 4, "{}", out.stderr);
        assert!(
            out.stderr.contains("not a sweep directory") && out.stderr.lines().count() == 1,
            "{}",
            out.stderr
        );
    }
}

#[test]
fn a_symlink_swapped_in_while_snippets_are_read_never_leaks_what_it_points_to() {
    // Before: the path was checked, then opened again by name; a link
    // swapped in between leaked the secret in 84 of 400 runs.
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    std::fs::create_dir(&proj).unwrap();
    let secret = tmp.path().join("secret.cu");
    std::fs::write(&secret, "l1\nl2\nl3\nl4\nl5\nl6 TOPSECRET\nl7\n").unwrap();
    let real = proj.join("real.cu");
    std::fs::write(&real, "l1\nl2\nl3\nl4\nl5\nl6 MINE\nl7\n").unwrap();
    let named = proj.join("mine.cu");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, named, real, secret, proj) = (
            stop.clone(),
            named.clone(),
            real.clone(),
            secret.clone(),
            proj.clone(),
        );
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Replace `mine.cu` atomically by a copy of the real file,
                // then by a link to the secret, again and again.
                let tmp_name = proj.join(format!(".swap-{n}"));
                if n.is_multiple_of(2) {
                    std::fs::copy(&real, &tmp_name).unwrap();
                } else {
                    std::os::unix::fs::symlink(&secret, &tmp_name).unwrap();
                }
                std::fs::rename(&tmp_name, &named).unwrap();
                n += 1;
            }
        })
    };
    // 120 reads, and on a loaded machine more, until the real file was read
    // at least 5 times (the swapper may hold the link most of the time).
    let (mut leaked, mut shown_mine, mut reads) = (0, 0, 0);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while reads < 120 || (shown_mine < 5 && std::time::Instant::now() < until) {
        let shown = parse_naming(&proj, &named.display().to_string(), &[]);
        leaked += usize::from(shown.contains("TOPSECRET"));
        shown_mine += usize::from(shown.contains("MINE"));
        reads += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(leaked, 0, "the secret leaked in {leaked} of {reads} runs");
    // The race was really run: the real file was read some of the time.
    assert!(shown_mine > 0, "the user's file was never shown");
}

#[test]
fn a_report_of_a_newer_schema_is_refused_never_read_as_clean() {
    // A newer cudawatch moved findings and stages under new keys: read by
    // this one, the unknown keys were dropped and the report was CLEAN,
    // and `diff` into it said "fixed (4)".
    let tmp = tempfile::tempdir().unwrap();
    let example = crate::helpers::root().join("docs/examples/oob_write.report.json");
    let mut newer: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&example).unwrap()).unwrap();
    newer["schema_version"] = 2.into();
    newer["results"] = serde_json::json!({
        "findings": newer["findings"].take(),
        "stages": newer["stages"].take(),
    });
    newer["findings"] = serde_json::json!([]);
    newer["stages"] = serde_json::json!([]);
    let path = tmp.path().join("newer.report.json");
    std::fs::write(&path, newer.to_string()).unwrap();
    let out = crate::helpers::run(crate::helpers::cudawatch().arg("report").arg(&path));
    assert_eq!(out.code, 4, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("a report of schema 2, newer than this cudawatch"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("CLEAN") && !out.stderr.contains("CLEAN"));
    let diff = crate::helpers::run(
        crate::helpers::cudawatch()
            .arg("diff")
            .arg(&example)
            .arg(&path),
    );
    assert_eq!(diff.code, 4, "{}{}", diff.stdout, diff.stderr);
}

#[test]
fn a_stage_folder_that_is_a_symlink_to_a_clean_run_is_not_read() {
    // `report DIR` where DIR/memcheck points at another, clean run's
    // folder was CLEAN: only the last path component was checked.
    let tmp = tempfile::tempdir().unwrap();
    let (buggy, clean) = (tmp.path().join("buggy"), tmp.path().join("clean"));
    assert_eq!(
        run(fake_run("oob_write", &buggy, "plain,memcheck", &[])).code,
        1
    );
    assert_eq!(
        run(fake_run("clean", &clean, "plain,memcheck", &[])).code,
        0
    );
    std::fs::remove_dir_all(buggy.join("memcheck")).unwrap();
    std::os::unix::fs::symlink(clean.join("memcheck"), buggy.join("memcheck")).unwrap();
    let out = run(cudawatch().arg("report").arg(&buggy));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("memcheck/ is a symbolic link"),
        "{}",
        out.stdout
    );
    // A stage.json copied from another stage's folder is refused too.
    std::fs::remove_file(buggy.join("memcheck")).unwrap();
    std::fs::create_dir(buggy.join("memcheck")).unwrap();
    std::fs::copy(
        clean.join("plain/stage.json"),
        buggy.join("memcheck/stage.json"),
    )
    .unwrap();
    let out = run(cudawatch().arg("report").arg(&buggy));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("is the record of a plain stage"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_report_larger_than_any_real_one_is_refused_before_it_is_read() {
    // A 684 MB foreign report took 10.6 GB and 41 s to read in `report`.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("huge.report.json");
    std::fs::write(&path, "{\"schema_version\": 1, \"findings\": [").unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(700 << 20).unwrap();
    for command in ["report", "diff"] {
        let mut cmd = crate::helpers::cudawatch();
        cmd.arg(command);
        if command == "diff" {
            cmd.arg(crate::helpers::root().join("docs/examples/oob_write.report.json"));
        }
        let out = crate::helpers::run(cmd.arg(&path));
        assert_eq!(out.code, 4, "{command}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr
                .contains("more than the 64 MiB cudawatch reads of a report"),
            "{command}: {}",
            out.stderr
        );
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    }
}

#[test]
fn a_program_that_prints_more_than_cudawatch_reads_is_judged_from_both_ends() {
    // A program that printed 3 GB made cudawatch, which read its output
    // whole, die of its memory limit with no report. Its first and last
    // bytes are read now (the error that ended it is at the end), and the
    // stage says what it did not read.
    let tmp = tempfile::tempdir().unwrap();
    let program = tmp.path().join("chatty.sh");
    std::fs::write(
        &program,
        "#!/bin/sh\necho starting\nyes \"$(head -c 100000 /dev/zero | tr '\\0' x)\" \
         | head -c 140000000\n\
         echo\necho 'RuntimeError: CUDA error: an illegal memory access was encountered' >&2\n\
         exit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out_dir = tmp.path().join("run");
    let out = crate::helpers::run(
        crate::helpers::cudawatch()
            .env("PATH", crate::helpers::fake_smi_path(tmp.path()).1)
            .args(["--color", "never", "run", "--stages", "plain", "--out-dir"])
            .arg(&out_dir)
            .arg("--")
            .arg(&program),
    );
    assert!(
        out.stderr
            .contains("root cause: plain cuda_error: cudaErrorIllegalAddress"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("could not read all of plain/stdout")
            && out
                .stderr
                .contains("its first 32 MiB and last 96 MiB were read"),
        "{}",
        out.stderr
    );
    // What it found gates; what it did not read keeps the plain run from
    // vouching.
    assert!(
        out.stderr
            .contains("INCONCLUSIVE: with findings: root cause: plain cuda_error")
            && out.stderr.contains("; and plain (")
            && out.stderr.contains("could not really check"),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
}

#[test]
fn a_fifo_named_to_report_parse_or_diff_is_refused_at_once_never_waited_on() {
    // Each blocked forever: opening a FIFO waits for a writer.
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("report.json");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let fifo = fifo.to_str().unwrap();
    for args in [
        vec!["report", fifo],
        vec!["parse", fifo],
        vec!["diff", fifo, fifo],
    ] {
        let out = crate::helpers::run(crate::helpers::cudawatch().args(&args));
        assert_eq!(out.code, 4, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("not a regular file"),
            "{args:?}: {}",
            out.stderr
        );
    }
    // A pipe through its descriptor is still read: `parse -`.
    let out = crate::helpers::run(crate::helpers::cudawatch().args(["parse", "-"]).stdin(
        std::fs::File::open(crate::helpers::sample("oob_write").join("memcheck.xml")).unwrap(),
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
}

#[test]
fn a_tools_own_flood_on_stdout_is_not_output_the_stage_failed_to_read() {
    // initcheck printed 206 MB of its records' lines on an EfficientNet's
    // two steps (H200, 2026-11-29), and the stage came out inconclusive
    // for the bytes it had not read. Those lines are the tool's (its
    // records are in its XML): a cut made only of them loses nothing.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let out = crate::helpers::run(
        fake_run("clean", &out_dir, "memcheck", &[]).env("FAKE_TOOL_FLOOD", "140000000"),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stderr.contains("could not read all") && out.stderr.contains("CLEAN"),
        "{}",
        out.stderr
    );
    // A program line among them still keeps the stage from vouching.
    let out_dir = tmp.path().join("run2");
    let out = crate::helpers::run(
        fake_run("clean", &out_dir, "memcheck", &[])
            .env("FAKE_TOOL_FLOOD", "70000000")
            .env("FAKE_CHATTY", "70000000"),
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("could not read all of memcheck/stdout"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_sanitizer_stage_reads_a_chatty_programs_output_from_both_ends() {
    // A sanitizer stage read its stdout (the program's own) whole: 200 MiB
    // printed, 425 MB resident. Now as the plain run reads it: its first
    // and last bytes, the tool's summary among them, and the stage says
    // what it did not read instead of vouching for it.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let out = crate::helpers::run(
        fake_run("clean", &out_dir, "memcheck", &[]).env("FAKE_CHATTY", "140000000"),
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("could not read all of memcheck/stdout")
            && out
                .stderr
                .contains("its first 32 MiB and last 96 MiB were read"),
        "{}",
        out.stderr
    );
    // The summary at the end was read: the tool ran to its end.
    let report = crate::helpers::read_json(&out_dir.join("report.json"));
    let memcheck = crate::run::stage(&report, "memcheck");
    assert_eq!(memcheck["summary"]["errors"], 0, "{memcheck}");
}
