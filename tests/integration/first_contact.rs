//! What a person meets first: a mistyped flag, a program that is not there,
//! a missing file named by a flag, a program that fails on its own. Each is
//! said once, before any stage runs, in a line that says what to do.

use crate::helpers::{cudawatch, run};

#[test]
fn a_mistyped_flag_is_an_error_with_a_tip_not_a_program() {
    // Before: `--stage` was run as the program, and `memcheck` after a
    // space-separated stage list too.
    let out = run(cudawatch().args(["run", "--stage", "plain", "--", "/bin/true"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("a similar argument exists: '--stages'"),
        "{}",
        out.stderr
    );
    let out = run(cudawatch().args(["run", "--stages", "plain", "memcheck", "--", "/bin/true"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("unexpected argument 'memcheck'"),
        "{}",
        out.stderr
    );
    let help = run(cudawatch().args(["run", "--help"]));
    assert!(help.stdout.contains("comma-separated"), "{}", help.stdout);
}

#[test]
fn a_program_that_is_not_there_is_one_line_and_exit_4_before_any_stage() {
    // Before: all six stages ran and the run exited 3 with a full report.
    let tmp = tempfile::tempdir().unwrap();
    for program in [
        &["./no-such-program"][..],
        &["no-such-program-anywhere"],
        &["python3", "missing.py"],
    ] {
        let out = run(cudawatch()
            .current_dir(tmp.path())
            .arg("run")
            .arg("--")
            .args(program));
        assert_eq!(out.code, 4, "{program:?}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
        assert!(
            out.stderr.starts_with("error: cannot run"),
            "{}",
            out.stderr
        );
    }
    assert!(!tmp.path().join("cudawatch-runs").exists(), "no stage ran");
}

#[test]
fn a_missing_baseline_or_suppressions_file_stops_the_run_before_it_starts() {
    // Before: noticed after every stage had run, and then no report at all.
    let tmp = tempfile::tempdir().unwrap();
    for flag in ["--baseline", "--suppressions", "--sanitizer-suppressions"] {
        let out = run(cudawatch().current_dir(tmp.path()).args([
            "run",
            flag,
            "missing.file",
            "--",
            "true",
        ]));
        assert_eq!(out.code, 4, "{flag}: {}", out.stderr);
        assert!(out.stderr.contains("missing.file"), "{}", out.stderr);
        assert!(
            !tmp.path().join("cudawatch-runs").exists(),
            "{flag}: a stage ran"
        );
    }
}

#[test]
fn when_the_program_fails_its_last_stderr_lines_are_shown_with_where_the_rest_is() {
    // Before: the report said only "the program exited 1".
    let tmp = tempfile::tempdir().unwrap();
    let out = run(crate::run::fake_run(
        "device_assert",
        tmp.path(),
        "plain",
        &[],
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let last =
        std::fs::read_to_string(crate::helpers::sample("device_assert").join("plain.stderr"))
            .unwrap()
            .lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap()
            .to_string();
    assert!(
        out.stderr
            .contains("The program's last lines on stderr (plain/stderr"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("| {last}")),
        "{last:?} in {}",
        out.stderr
    );
}

#[test]
fn report_parse_diff_and_config_print_their_product_on_stdout() {
    // Before: all on stderr, so `cudawatch report r.json > r.txt` and
    // `cudawatch config | grep fail-on` got nothing.
    let example = crate::helpers::root().join("docs/examples/oob_write.report.json");
    let report = run(cudawatch().arg("report").arg(&example));
    assert!(report.stdout.contains("Findings by site") && report.stdout.contains("FINDINGS:"));
    assert!(
        !report.stderr.contains("Findings by site"),
        "{}",
        report.stderr
    );
    // A machine format on stdout keeps it: the human report moves to stderr.
    let json = run(cudawatch()
        .arg("report")
        .arg(&example)
        .args(["--format", "json"]));
    assert!(json.stdout.trim_start().starts_with('{') && json.stderr.contains("FINDINGS:"));
    let config = run(cudawatch().args(["config"]));
    assert!(
        config.stdout.lines().any(|l| l.contains("fail-on")),
        "{}",
        config.stdout
    );
    let config_json = run(cudawatch().args(["config", "--format", "json"]));
    assert!(
        config_json.stdout.contains("\"settings\""),
        "{}",
        config_json.stdout
    );
    let diff = run(cudawatch().arg("diff").arg(&example).arg(&example));
    assert!(diff.stdout.contains("unchanged (1)"), "{}", diff.stdout);
}

/// The display width of a line (box drawing, `…` and `×` are one column each).
fn columns(line: &str) -> usize {
    line.chars().count()
}

#[test]
fn tables_fit_80_and_120_columns_and_narrow_findings_are_a_list() {
    // Before: fixed cell widths; at 80 columns every row wrapped into noise,
    // at 120 the tables still reached 165 columns.
    for case in ["oob_write", "coalescing", "torch_train_clean", "smem_race"] {
        let report = crate::helpers::root().join(format!("docs/examples/{case}.report.json"));
        for width in [80, 120] {
            let out = run(cudawatch()
                .env("COLUMNS", width.to_string())
                .arg("report")
                .arg(&report));
            let tables: Vec<&str> = out
                .stdout
                .lines()
                .filter(|l| l.starts_with(['┌', '│', '├', '└']))
                .collect();
            assert!(!tables.is_empty(), "{case}");
            for line in tables {
                assert!(
                    columns(line) <= width,
                    "{case} at {width}: {} columns: {line}",
                    columns(line)
                );
            }
            let listed = out.stdout.contains("  1. ");
            let has_findings = !out.stdout.contains("Findings by site (0)");
            assert_eq!(listed, width < 110 && has_findings, "{case} at {width}");
        }
    }
    // A file or a pipe without COLUMNS keeps every table whole.
    let report = crate::helpers::root().join("docs/examples/oob_write.report.json");
    let whole = run(cudawatch().env_remove("COLUMNS").arg("report").arg(&report));
    assert!(
        whole
            .stdout
            .lines()
            .any(|l| l.starts_with('│') && columns(l) > 120)
    );
}

#[test]
fn help_is_grouped_config_shows_the_tools_it_finds_and_every_subcommand_has_a_man_page() {
    let help = run(cudawatch().args(["run", "--help"]));
    for heading in [
        "Stages:",
        "Tools:",
        "Timeouts:",
        "Output:",
        "Gate:",
        "Checklist thresholds:",
    ] {
        assert!(help.stdout.contains(heading), "{heading}: {}", help.stdout);
    }
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("compute-sanitizer");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = run(cudawatch()
        .env("PATH", format!("{}:/usr/bin:/bin", tmp.path().display()))
        .args(["config", "--format", "json"]));
    let settings = crate::helpers::json(&config)["settings"].clone();
    let found = settings
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"] == "compute-sanitizer")
        .unwrap()
        .clone();
    assert_eq!(found["value"], tool.display().to_string(), "{found}");
    assert!(
        found["origin"].as_str().unwrap().starts_with("lookup"),
        "{found}"
    );
    let pages = tmp.path().join("man");
    let out = run(cudawatch().args(["man", "--dir"]).arg(&pages));
    assert_eq!(out.code, 0, "{}", out.stderr);
    for sub in ["run", "report", "parse", "diff", "suppress", "config"] {
        let page = std::fs::read_to_string(pages.join(format!("cudawatch-{sub}.1"))).unwrap();
        assert!(page.contains(".TH"), "{sub}");
    }
    let root = std::fs::read_to_string(pages.join("cudawatch.1")).unwrap();
    assert!(
        root.contains("Exit status") && root.contains("CUDAWATCH_CONFIG"),
        "exit codes and environment"
    );
}

#[test]
fn absent_figures_are_dashes_and_a_finding_without_a_line_still_names_its_kernel() {
    let root = crate::helpers::root();
    let oob = run(cudawatch()
        .arg("report")
        .arg(root.join("docs/examples/oob_write.report.json")));
    let row = oob
        .stdout
        .lines()
        .find(|l| l.starts_with("│ oob_write(int *, int)"))
        .unwrap();
    // oob_write only stores: no "bytes used" share of loads, not 0.0%.
    assert!(!row.contains("0.0%"), "{row}");
    assert!(oob.stdout.contains("1 site, first") && !oob.stdout.contains("1 sites"));
    let gpt2 = run(cudawatch()
        .arg("report")
        .arg(root.join("docs/examples/real/gpt2_step.report.json"))
        .args(["--gate-scope", "all"]));
    assert!(
        gpt2.stdout
            .contains("in kernel fmha_cutlassF_f32_aligned_64x64_rf_sm80"),
        "{}",
        gpt2.stdout
    );
}

#[test]
fn parse_applies_the_coalescing_thresholds_it_is_given() {
    // Before: accepted and ignored.
    let coal = crate::helpers::sample("coalescing");
    let pages = |extra: &[&str]| {
        run(cudawatch()
            .arg("parse")
            .arg(coal.join("ncu-raw.stdout"))
            .arg(coal.join("ncu-details.stdout"))
            .args(extra))
    };
    let strict = pages(&[]);
    assert_eq!(
        strict.code, 1,
        "78% wasted is over the default 50%: {}",
        strict.stdout
    );
    assert!(
        strict.stdout.contains("coalescing within thresholds"),
        "{}",
        strict.stdout
    );
    let loose = pages(&["--max-wasted-sectors", "90"]);
    assert_eq!(loose.code, 0, "{}", loose.stdout);
}

#[test]
fn a_crash_is_said_to_be_not_reproduced_only_when_memcheck_looked() {
    // Before: "(not reproduced under the sanitizers)" after `--stages
    // plain`, telling the user the crash was probably no memory error
    // from a check that never ran.
    let tmp = tempfile::tempdir().unwrap();
    let verdict = |stages: &str| -> String {
        let dir = tmp.path().join(stages.replace(',', "-"));
        let out = run(crate::run::fake_run("misaligned", &dir, stages, &[]));
        assert_eq!(out.code, 1, "{}", out.stderr);
        out.stderr
            .lines()
            .find(|l| l.starts_with("FINDINGS:"))
            .unwrap_or_else(|| panic!("{}", out.stderr))
            .to_string()
    };
    let plain = verdict("plain");
    assert!(
        plain.contains("cudaErrorMisalignedAddress")
            && plain.contains(
                "(no memcheck ran to find where it started: cudawatch run --stages plain,memcheck)"
            ),
        "{plain}"
    );
    assert!(!plain.contains("not reproduced"), "{plain}");
    // With memcheck run, its own finding is the root cause.
    let checked = verdict("plain,memcheck");
    assert!(!checked.contains("no memcheck ran"), "{checked}");
    assert!(checked.contains("root cause: memcheck"), "{checked}");
}

#[test]
fn a_failed_check_under_fail_on_never_passes_but_is_never_called_clean() {
    // Before: "CLEAN: no errors found" for a program that exited 3.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(cudawatch().args([
        "--color",
        "never",
        "run",
        "--out-dir",
        tmp.path().join("run").to_str().unwrap(),
        "--stages",
        "plain",
        "--fail-on",
        "never",
        "--",
        "sh",
        "-c",
        "exit 3",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("CLEAN"), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "PASSED: no sites; failed checks: plain run exits cleanly; none fails the gate (--fail-on never)"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_script_named_without_its_interpreter_gets_the_command_to_run() {
    // `cudawatch run -- train.py` said only "no executable of that name on
    // PATH", though train.py was right there.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("train.py"), "print('step 0')\n").unwrap();
    let out = crate::helpers::run(
        crate::helpers::cudawatch()
            .current_dir(tmp.path())
            .args(["run", "--", "train.py"]),
    );
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("cudawatch run -- python3 train.py"),
        "{}",
        out.stderr
    );
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count(),
        1
    );
}

#[test]
fn a_report_piped_into_a_pager_fits_the_terminal_it_is_shown_in() {
    // `cudawatch report r.json | less` in a 60-column terminal: stdout is
    // a pipe, so the report was not fitted and the pager showed lines of
    // 400 columns. `script` gives the command a terminal (its stderr).
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: util-linux's `script` is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let paged = tmp.path().join("paged.txt");
    let binary = assert_cmd_path();
    let example = crate::helpers::root().join("docs/examples/oob_write.report.json");
    let line = format!(
        "stty cols 60; '{}' --color never report '{}' | cat > '{}'",
        binary.display(),
        example.display(),
        paged.display()
    );
    let status = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_remove("COLUMNS")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success() || status.code() == Some(1), "{status:?}");
    let text = std::fs::read_to_string(&paged).unwrap();
    assert!(text.contains("FINDINGS:"), "{text}");
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 60, "a line of {widest} columns:\n{text}");
    // Into a file, nothing is cut to a terminal's width.
    let plain = run(cudawatch()
        .args(["--color", "never", "report"])
        .arg(&example));
    assert!(plain.stdout.lines().any(|l| l.chars().count() > 60));
}

/// The cudawatch binary the tests run.
fn assert_cmd_path() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_cudawatch"))
}

#[test]
fn a_user_without_a_gpu_or_a_clone_can_render_the_bundled_real_run() {
    // `pip install cudawatch` gave no example: the README's first command
    // reads docs/examples/, which only a clone has.
    let tmp = tempfile::tempdir().unwrap();
    let out =
        run(cudawatch()
            .current_dir(tmp.path())
            .args(["--color", "never", "report", "--example"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("FINDINGS: root cause: memcheck invalid_access at tests/gpu/oob_write.cu:6"),
        "{}",
        out.stdout
    );
    let json =
        run(cudawatch()
            .current_dir(tmp.path())
            .args(["report", "--example", "--format", "json"]));
    assert_eq!(
        crate::helpers::json(&json)["findings"][0]["kind"],
        "invalid_access"
    );
}

#[test]
fn an_executable_python_script_without_its_hash_bang_line_is_told_how_to_run() {
    // The shell read it ("import: command not found") and nothing said why.
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("train.py");
    std::fs::write(&script, "import torch\nprint('step 1')\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = crate::helpers::run(crate::helpers::cudawatch().current_dir(tmp.path()).args([
        "run",
        "--",
        "./train.py",
    ]));
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("it has no #! line")
            && out.stderr.contains("cudawatch run -- python3 ./train.py"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_closing_environment_block_says_said_above_only_of_what_was_said_above() {
    // Missing tools were listed as "said above" although the run never
    // printed them as warnings before its stages.
    let tmp = tempfile::tempdir().unwrap();
    let out = crate::helpers::run(
        crate::helpers::cudawatch()
            .env("PATH", "/usr/bin:/bin")
            .env_remove("CUDA_HOME")
            .args(["--color", "never", "run", "--stages", "plain", "--out-dir"])
            .arg(tmp.path().join("run"))
            .args(["--", "true"]),
    );
    let block: String = out
        .stderr
        .split("Environment:")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        block.contains("problem compute-sanitizer found") && !block.contains("said above: compute"),
        "{block}"
    );
    // What is named as said above was said above.
    if let Some(said) = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("- said above: "))
    {
        for title in said.split(", ") {
            let before = out.stderr.split("Environment:").next().unwrap();
            assert!(
                before.contains(title),
                "{title} was not said above:\n{}",
                out.stderr
            );
        }
    }
}

#[test]
fn a_project_file_is_spelled_one_way_in_every_human_format() {
    // Before: `./tests/gpu/oob_write.cu:6` in the Markdown and JUnit,
    // `tests/gpu/oob_write.cu:6` in the terminal, HTML and SARIF, and
    // `oob_write.cu:6` on the verdict line and in the checklist.
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = cudawatch();
    cmd.current_dir(tmp.path())
        .args(["--color", "never", "report", "--example"]);
    for format in ["markdown", "html", "junit", "sarif"] {
        cmd.args(["--report", &format!("{format}={format}.out")]);
    }
    let out = run(&mut cmd);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let mut shown = vec![("terminal".to_string(), out.stdout.clone())];
    for format in ["markdown", "html", "junit", "sarif"] {
        let text = std::fs::read_to_string(tmp.path().join(format!("{format}.out"))).unwrap();
        // Markdown escapes the underscore.
        shown.push((format.to_string(), text.replace("\\_", "_")));
    }
    for (format, text) in &shown {
        assert!(text.contains("tests/gpu/oob_write.cu"), "{format}: {text}");
        assert!(
            !text.contains("./tests/gpu/oob_write.cu"),
            "{format}: {text}"
        );
        let bare =
            text.matches(" oob_write.cu:6").count() + text.matches("`oob_write.cu:6").count();
        assert_eq!(bare, 0, "{format}: {text}");
    }
}

#[test]
fn the_html_and_markdown_say_where_the_run_ran() {
    // Before: only the terminal and the JSON had the environment; a pull
    // request's reader could not tell which compute-sanitizer or driver
    // checked the program.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(cudawatch().current_dir(tmp.path()).args([
        "report",
        "--example",
        "--report",
        "html=r.html",
        "--report",
        "markdown=r.md",
    ]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    for page in ["r.html", "r.md"] {
        let text = std::fs::read_to_string(tmp.path().join(page)).unwrap();
        let env = &text[text.find("Environment").expect(page)..];
        assert!(env.contains("doctor: all ok"), "{page}: {env}");
        assert!(
            env.contains("compute-sanitizer 2025.3.1.0"),
            "{page}: {env}"
        );
        assert!(env.contains("580.159.04"), "{page}: {env}");
    }
}

#[test]
fn run_dash_h_is_a_screenful_and_dash_dash_help_has_every_flag() {
    // Before: `run -h` was 262 lines at 80 columns, every tool knob in it.
    let short = run(cudawatch().env("COLUMNS", "80").args(["run", "-h"]));
    let lines = short.stdout.lines().count();
    assert!(lines <= 100, "{lines} lines:\n{}", short.stdout);
    for common in [
        "--stages",
        "--steps",
        "--whole-program",
        "--report",
        "--fail-on",
        "--timeout",
    ] {
        assert!(short.stdout.contains(common), "{common}: {}", short.stdout);
    }
    assert!(
        short.stdout.contains("see more with '--help'"),
        "{}",
        short.stdout
    );
    assert!(
        !short.stdout.contains("--sanitizer-kernel"),
        "{}",
        short.stdout
    );
    let long = run(cudawatch().env("COLUMNS", "80").args(["run", "--help"]));
    for knob in [
        "--sanitizer-kernel",
        "--racecheck-sanitizer",
        "--max-wasted-sectors",
        "--grace",
    ] {
        assert!(long.stdout.contains(knob), "{knob}: {}", long.stdout);
    }
}
