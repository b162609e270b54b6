//! `cudawatch.toml` and `cudawatch config` through the real binary: the
//! file is found from a subdirectory, and the command line beats the
//! environment, which beats the file.

use std::path::Path;

use crate::helpers::{cudawatch, json, run, sample};

/// `cudawatch parse` of memcheck's out-of-bounds write (an error) from `cwd`.
fn parse_oob_write(cwd: &Path) -> std::process::Command {
    let mut cmd = cudawatch();
    cmd.current_dir(cwd)
        .arg("parse")
        .arg(sample("oob_write").join("memcheck.xml"));
    cmd
}

#[test]
fn the_gate_follows_the_file_then_the_environment_then_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("cudawatch.toml"), "fail-on = \"never\"\n").unwrap();
    let nested = tmp.path().join("src/kernels");
    std::fs::create_dir_all(&nested).unwrap();

    let by_file = run(parse_oob_write(&nested));
    assert_eq!(
        by_file.code, 0,
        "the file's fail-on = never: {}",
        by_file.stderr
    );

    let mut with_env = parse_oob_write(&nested);
    with_env.env("CUDAWATCH_FAIL_ON", "error");
    let by_env = run(with_env);
    assert_eq!(by_env.code, 1, "the environment beats the file");

    let mut with_flag = parse_oob_write(&nested);
    with_flag
        .env("CUDAWATCH_FAIL_ON", "error")
        .args(["--fail-on", "never"]);
    assert_eq!(run(with_flag).code, 0, "the command line beats both");

    let mut elsewhere = parse_oob_write(tmp.path().parent().unwrap());
    elsewhere.env("CUDAWATCH_CONFIG", tmp.path().join("cudawatch.toml"));
    assert_eq!(run(elsewhere).code, 0, "CUDAWATCH_CONFIG names the file");
}

#[test]
fn file_reports_are_written_next_to_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cudawatch.toml"),
        "report = [\"sarif=out/cudawatch.sarif\", \"junit=out/junit.xml\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(tmp.path().join("out")).unwrap();
    let nested = tmp.path().join("a");
    std::fs::create_dir_all(&nested).unwrap();
    let out = run(parse_oob_write(&nested));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(tmp.path().join("out/cudawatch.sarif").is_file());
    assert!(tmp.path().join("out/junit.xml").is_file());
}

#[test]
fn config_shows_each_setting_and_where_it_came_from() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("cudawatch.toml");
    std::fs::write(
        &file,
        "# team gate\nfail-on = \"warning\"\nmax-wasted-sectors = 40\ngrace = 9\n",
    )
    .unwrap();
    let mut cmd = cudawatch();
    cmd.current_dir(tmp.path())
        .env("CUDAWATCH_GRACE", "2")
        .args(["config", "--format", "json", "--max-wasted-sectors", "35"]);
    let out = run(cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    assert_eq!(report["config_file"], file.display().to_string());
    let setting = |key: &str| {
        report["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["setting"] == key)
            .unwrap_or_else(|| panic!("{key} listed"))
            .clone()
    };
    assert_eq!(setting("fail-on")["value"], "warning");
    assert_eq!(
        setting("fail-on")["origin"],
        format!("{}:2", file.display())
    );
    assert_eq!(setting("max-wasted-sectors")["value"], "35");
    assert_eq!(setting("max-wasted-sectors")["origin"], "command line");
    assert_eq!(setting("grace")["value"], "2");
    assert_eq!(setting("grace")["origin"], "environment CUDAWATCH_GRACE");
    assert_eq!(setting("min-memory-headroom")["origin"], "default");
}

#[test]
fn a_bad_file_is_a_setup_error_naming_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cudawatch.toml"),
        "fail-on = \"error\"\nmax-wasted-sector = 40\n",
    )
    .unwrap();
    let out = run(parse_oob_write(tmp.path()));
    // A bad file is a setup error (4) whatever the file, as a bad
    // suppression file is; 2 is the command line's own mistakes.
    assert_eq!(out.code, 4, "{}", out.stderr);
    let line = out.stderr.trim();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.contains("cudawatch.toml:2: max-wasted-sector: not a setting"),
        "{line}"
    );
}

#[test]
fn coalescing_thresholds_from_the_file_and_the_environment_decide_a_real_run() {
    let tmp = tempfile::tempdir().unwrap();
    // The H100 run's strided gather wastes 78% of its sectors, needs 32
    // sectors per load request where 4 would do, all on coalescing.cu:12.
    std::fs::write(
        tmp.path().join("cudawatch.toml"),
        "max-wasted-sectors = 80\n",
    )
    .unwrap();
    let report = crate::helpers::root().join("docs/examples/coalescing.report.json");
    let gate = |env: &[(&str, &str)]| {
        let mut cmd = cudawatch();
        cmd.current_dir(tmp.path())
            .arg("report")
            .arg(&report)
            .args(["--format", "json"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = run(cmd);
        let item = json(&out)["checklist"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == "coalescing_within_thresholds")
            .unwrap()
            .clone();
        (out.code, item)
    };
    let (code, item) = gate(&[]);
    assert_eq!((code, item["status"].as_str()), (0, Some("pass")), "{item}");
    let (code, item) = gate(&[("CUDAWATCH_MAX_EXCESS_SECTORS_PER_REQUEST", "8")]);
    assert_eq!((code, item["status"].as_str()), (1, Some("fail")), "{item}");
    assert!(
        item["evidence"]
            .as_str()
            .unwrap()
            .contains("loads need 28.0 sectors per request beyond the ideal (limit 8.0)"),
        "{item}"
    );
    let (code, item) = gate(&[("CUDAWATCH_MAX_LINE_WASTED_SECTORS", "50")]);
    assert_eq!(code, 1);
    assert!(
        item["evidence"]
            .as_str()
            .unwrap()
            .contains("coalescing.cu:12"),
        "{item}"
    );
}

/// `cudawatch parse` of the oob_write capture (exit 1 when its settings
/// are the defaults) run in `cwd`.
fn parse_oob_in(cwd: &std::path::Path) -> crate::helpers::Output {
    let oob = crate::helpers::sample("oob_write");
    crate::helpers::run(
        crate::helpers::cudawatch()
            .current_dir(cwd)
            .env("HOME", "/nonexistent-home")
            .arg("parse")
            .arg(oob.join("memcheck.xml")),
    )
}

#[test]
fn a_settings_file_from_someone_else_or_outside_the_project_is_not_obeyed() {
    // Before: /tmp/cudawatch.toml (or one in a capture bundle) could set
    // fail-on = "never" and a run with error findings exited 0.
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let lowering = "fail-on = \"never\"\n";
    // Above the project (its .git marks where the search stops): not found.
    std::fs::write(tmp.path().join("cudawatch.toml"), lowering).unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let out = parse_oob_in(&project);
    assert_eq!(out.code, 1, "{}", out.stderr);
    // Writable by others: refused, and the user is told.
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let file = shared.join("cudawatch.toml");
    std::fs::write(&file, lowering).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = parse_oob_in(&shared);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("not using") && out.stderr.contains("others can write to it"),
        "{}",
        out.stderr
    );
    // Someone else's (as root, where CI runs, the file is given away).
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    if rustix::process::geteuid().is_root() {
        rustix::fs::chown(&file, Some(rustix::fs::Uid::from_raw(4242)), None).unwrap();
        let out = parse_oob_in(&shared);
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(out.stderr.contains("belongs to uid 4242"), "{}", out.stderr);
        rustix::fs::chown(&file, Some(rustix::process::geteuid()), None).unwrap();
    } else {
        eprintln!("skipping the foreign-owner case: it needs root to give a file away");
    }
    // The user's own file is obeyed, and what it lowers is on the terminal.
    let out = parse_oob_in(&shared);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("settings from") && out.stderr.contains("fail-on = never"),
        "{}",
        out.stderr
    );
    // A link to the user's own file, in a shared folder: obeyed before,
    // its relative report paths resolved beside the link.
    let linked = tmp.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(&file, linked.join("cudawatch.toml")).unwrap();
    let out = parse_oob_in(&linked);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("not using") && out.stderr.contains("it is a symbolic link"),
        "{}",
        out.stderr
    );
    // The user's own file in a folder anyone can write (not sticky).
    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::write(open.join("cudawatch.toml"), lowering).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = parse_oob_in(&open);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("others can write to its folder"),
        "{}",
        out.stderr
    );
}

#[test]
fn errors_from_a_settings_file_reach_the_terminal_neutralised() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cudawatch.toml"),
        "\"fail\u{1b}[2J\u{7}on\" = \"never\"\n",
    )
    .unwrap();
    let out = parse_oob_in(tmp.path());
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        !out.stderr.contains('\u{1b}') && !out.stderr.contains('\u{7}'),
        "{:?}",
        out.stderr
    );
}

#[test]
fn config_prints_values_from_a_settings_file_neutralised() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cudawatch.toml"),
        // TOML's own escapes: the parsed value holds ESC and BEL.
        "report = [\"markdown=x\\u001b]52;c;cHduZWQ=\\u0007.md\"]\n",
    )
    .unwrap();
    let out = crate::helpers::run(
        crate::helpers::cudawatch()
            .current_dir(tmp.path())
            .env("HOME", "/nonexistent-home")
            .arg("config"),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("52;c;cHduZWQ="), "{}", out.stdout);
    assert!(
        !out.stdout.contains('\u{1b}') && !out.stdout.contains('\u{7}'),
        "{:?}",
        out.stdout
    );
}

#[test]
fn a_settings_file_that_narrows_the_check_says_so_and_writes_only_below_its_folder() {
    // Before: `stages = ["plain"]` in the user's own cudawatch.toml (an
    // unpacked capture bundle is the user's) printed only "settings from
    // FILE", and CLEAN did not say memcheck ... ncu never ran; a `report`
    // path through `..` overwrote a file outside the folder.
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join("cudawatch.toml"), "stages = [\"plain\"]\n").unwrap();
    let out = run(
        crate::run::fake_run("clean", &project.join("run"), "plain", &[])
            .current_dir(&project)
            .env_remove("CUDAWATCH_STAGES"),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("stages = plain"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("not run (--stages): memcheck, racecheck, initcheck, synccheck"),
        "{}",
        out.stderr
    );
    let victim = tmp.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("notes.txt"), "mine\n").unwrap();
    // A report path out of the file's folder, by `..` or through a link in
    // the bundle that points out of it (which overwrote the victim's file).
    std::os::unix::fs::symlink(&victim, project.join("lnk")).unwrap();
    for report in ["../victim/notes.txt", "lnk/notes.txt"] {
        std::fs::write(
            project.join("cudawatch.toml"),
            format!("report = [\"markdown={report}\"]\n"),
        )
        .unwrap();
        let out = run(cudawatch()
            .current_dir(&project)
            .arg("parse")
            .arg(sample("clean").join("memcheck.xml")));
        assert_eq!(out.code, 4, "{report}: {}", out.stderr);
        assert!(
            out.stderr.contains("writes outside this file's folder"),
            "{report}: {}",
            out.stderr
        );
        assert_eq!(
            std::fs::read_to_string(victim.join("notes.txt")).unwrap(),
            "mine\n"
        );
    }
}

#[test]
fn on_off_settings_take_1_and_0_and_a_bad_value_names_the_variable() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(
        crate::run::fake_run("clean", &tmp.path().join("a"), "plain", &[])
            .env("CUDAWATCH_KEEP_CACHING_ALLOCATOR", "1"),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(
        crate::run::fake_run("clean", &tmp.path().join("b"), "plain", &[])
            .env("CUDAWATCH_STREAM", "maybe"),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("CUDAWATCH_STREAM=maybe: expects 1 or 0 (or true, false, yes, no, on, off)"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("'--stream'"), "{}", out.stderr);
    // A settings file's `= 1` reads as the variable's.
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(
        project.join("cudawatch.toml"),
        "keep-caching-allocator = 1\n",
    )
    .unwrap();
    let out = run(
        crate::run::fake_run("clean", &project.join("run"), "plain", &[]).current_dir(&project),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_settings_file_makes_its_folder_the_source_root_wherever_in_the_project_cudawatch_runs() {
    // The gate example ran in build/ and its SARIF named the source by
    // the GPU host's path until its file said `source-root = "."`: the
    // file's folder is the project's root.
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(project.join("build")).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::copy(
        crate::helpers::root().join("tests/gpu/oob_write.cu"),
        project.join("src/oob_write.cu"),
    )
    .unwrap();
    std::fs::write(project.join("cudawatch.toml"), "fail-on = \"error\"\n").unwrap();
    // The H100's capture, as if the program had been built in this project.
    let xml = std::fs::read_to_string(sample("oob_write").join("memcheck.xml"))
        .unwrap()
        .replace(
            "/work/main/tests/gpu/",
            &format!("{}/src/", project.display()),
        );
    let capture = tmp.path().join("memcheck.xml");
    std::fs::write(&capture, xml).unwrap();
    let out = run(cudawatch()
        .current_dir(project.join("build"))
        .args(["parse", "--format", "json"])
        .arg(&capture));
    let report = json(&out);
    let site = &report["findings"][0];
    assert_eq!(site["location"]["file"], "./src/oob_write.cu", "{site}");
    assert!(site["snippet"].is_object(), "read from the project: {site}");
    assert!(
        !out.stderr.contains("source-root"),
        "an implied root is not announced as a setting: {}",
        out.stderr
    );
    let config = run(cudawatch()
        .current_dir(project.join("build"))
        .args(["config", "--format", "json"]));
    let settings = json(&config)["settings"].clone();
    let root = settings
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"] == "source-root")
        .unwrap()
        .clone();
    assert!(
        root["origin"]
            .as_str()
            .unwrap()
            .starts_with("the folder of "),
        "{root}"
    );
    // A shared file named with --config from outside the project is not
    // its root: the working directory stays the root.
    std::fs::create_dir_all(tmp.path().join("team")).unwrap();
    let shared = tmp.path().join("team/shared.toml");
    std::fs::write(&shared, "fail-on = \"error\"\n").unwrap();
    let out = run(cudawatch()
        .current_dir(project.join("src"))
        .args(["--config"])
        .arg(&shared)
        .args(["parse", "--format", "json"])
        .arg(&capture));
    let file = json(&out)["findings"][0]["location"]["file"].clone();
    assert_eq!(file, "./oob_write.cu", "from the working directory");
    // A root the file sets itself is the file's.
    std::fs::write(project.join("cudawatch.toml"), "source-root = \"build\"\n").unwrap();
    let out = run(cudawatch()
        .current_dir(project.join("build"))
        .args(["parse", "--format", "json"])
        .arg(&capture));
    let file = json(&out)["findings"][0]["location"]["file"].clone();
    assert!(
        file.as_str().unwrap().ends_with("/proj/src/oob_write.cu"),
        "outside the root the file set: {file}"
    );
}

#[test]
fn a_baseline_the_settings_file_names_that_is_missing_is_named_by_file_line_and_key() {
    // docs/ci.md's settings file on the first CI run, before its first step
    // made the files: the error named `--baseline`, a flag nobody typed.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cudawatch.toml"),
        "fail-on = \"error\"\nbaseline = \".cudawatch/baseline.json\"\n",
    )
    .unwrap();
    let out = crate::helpers::run(
        crate::helpers::cudawatch()
            .current_dir(tmp.path())
            .args(["run", "--stages", "plain", "--", "true"]),
    );
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("cudawatch.toml:2: baseline = \"")
            && out.stderr.contains(".cudawatch/baseline.json\"")
            && !out.stderr.contains("--baseline"),
        "{}",
        out.stderr
    );
    // docs/ci.md's first step, then the same run: it reads them.
    let dot = tmp.path().join(".cudawatch");
    std::fs::create_dir_all(&dot).unwrap();
    std::fs::write(dot.join("suppress.toml"), "").unwrap();
    std::fs::rename(
        tmp.path().join("cudawatch.toml"),
        tmp.path().join("later.toml"),
    )
    .unwrap();
    let first = crate::helpers::run(crate::helpers::cudawatch().current_dir(tmp.path()).args([
        "run",
        "--stages",
        "plain",
        "--out-dir",
        ".cudawatch/first",
        "--",
        "true",
    ]));
    assert_eq!(first.code, 0, "{}", first.stderr);
    std::fs::copy(dot.join("first/report.json"), dot.join("baseline.json")).unwrap();
    std::fs::rename(
        tmp.path().join("later.toml"),
        tmp.path().join("cudawatch.toml"),
    )
    .unwrap();
    let gated = crate::helpers::run(
        crate::helpers::cudawatch()
            .current_dir(tmp.path())
            .args(["run", "--stages", "plain", "--", "true"]),
    );
    assert_eq!(gated.code, 0, "{}", gated.stderr);
}
