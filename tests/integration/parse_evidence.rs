//! `cudawatch parse` is clean only for tool output it recognised as
//! complete, and says what that covered. Each input here once gave
//! "CLEAN", exit 0.

use std::io::Write;
use std::process::Stdio;

use crate::helpers::{cudawatch, run, sample};

/// `cudawatch parse` of the given files: exit code and stdout.
fn parse(files: &[&std::path::Path]) -> (i32, String) {
    let out = run(cudawatch().arg("parse").args(files));
    (out.code, out.stdout)
}

fn file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn input_with_no_tool_output_checked_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty.log", Vec::new()),
        (
            "README.md",
            b"# My project\n\nTrains a small model.\n".to_vec(),
        ),
        (
            "train.log",
            b"epoch 1 loss 2.31\nepoch 2 loss 1.97\nsaved checkpoint\n".to_vec(),
        ),
        (
            "ci.log",
            b"+ compute-sanitizer --tool memcheck python train.py\n\
              bash: line 1: compute-sanitizer: command not found\n"
                .to_vec(),
        ),
    ];
    for (name, bytes) in cases {
        let path = file(&tmp, name, &bytes);
        let (code, stdout) = parse(&[&path]);
        assert_eq!(code, 3, "{name}: {stdout}");
        assert!(!stdout.contains("CLEAN"), "{name}: {stdout}");
        assert!(stdout.contains("recognised nothing"), "{name}: {stdout}");
    }
}

#[test]
fn an_empty_pipe_checked_nothing() {
    let mut child = cudawatch()
        .args(["parse", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let out = crate::helpers::finish(child);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
}

#[test]
fn a_sanitizer_log_cut_before_its_summary_is_not_clean() {
    // The project's own capture of a memcheck stopped by its timeout.
    let cut = sample("torch_train_clean").join("memcheck.stdout");
    let (code, stdout) = parse(&[&cut]);
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stdout.contains("ends before compute-sanitizer's summary line"),
        "{stdout}"
    );
    // And a complete log cut in half by hand.
    let tmp = tempfile::tempdir().unwrap();
    let whole = std::fs::read(sample("oob_write").join("memcheck.stdout")).unwrap();
    let half = file(&tmp, "memcheck.log", &whole[..whole.len() / 2]);
    let (code, stdout) = parse(&[&half]);
    assert_eq!(code, 3, "{stdout}");
}

#[test]
fn an_ncu_page_with_only_its_headers_measured_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let page = std::fs::read_to_string(sample("coalescing").join("ncu-raw.stdout")).unwrap();
    let headers: String = page.lines().take(2).map(|l| format!("{l}\n")).collect();
    let path = file(&tmp, "raw.csv", headers.as_bytes());
    let (code, stdout) = parse(&[&path]);
    assert_eq!(code, 3, "{stdout}");
    assert!(!stdout.contains("CLEAN"), "{stdout}");
}

#[test]
fn sanitizer_output_after_the_first_16_kib_of_a_ci_log_is_read() {
    // Before: detection looked at the first 16 KiB only, so a log whose
    // build output came first was "program output" and clean.
    let tmp = tempfile::tempdir().unwrap();
    let mut log = Vec::new();
    for i in 0..2000 {
        writeln!(log, "[build] compiling object {i} of 2000 with -O2").unwrap();
    }
    assert!(log.len() > 16 * 1024);
    log.extend(std::fs::read(sample("oob_write").join("memcheck.stdout")).unwrap());
    let path = file(&tmp, "job.log", &log);
    let (code, stdout) = parse(&[&path]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("invalid_access") || stdout.contains("Invalid __global__"),
        "{stdout}"
    );
}

#[test]
fn a_clean_complete_capture_says_what_it_covered() {
    let xml = sample("clean").join("memcheck.xml");
    let (code, stdout) = parse(&[&xml]);
    assert_eq!(code, 0, "{stdout}");
    let verdict = stdout.lines().find(|l| l.starts_with("CLEAN")).unwrap();
    assert!(
        verdict.contains("checked: memcheck (1 file)")
            && verdict.contains("not given: racecheck, initcheck, synccheck, ncu"),
        "{verdict}"
    );
}

#[test]
fn ncu_figures_no_gpu_could_print_leave_their_launch_unread_never_read_as_less_waste() {
    // The real raw page of a strided copy that wastes 78% of its sectors
    // (3,670,016 excessive of 4,718,592): the gate fails it (exit 1).
    let page = std::fs::read_to_string(sample("coalescing").join("ncu-raw.stdout")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (code, stdout) = parse(&[&file(&tmp, "raw.csv", page.as_bytes())]);
    assert_eq!(code, 1, "the undamaged page: {stdout}");
    for bad in ["inf", "1e300", "-3,670,016", "3.670.016", "NaN"] {
        let damaged = page.replacen("\"3,670,016\"", &format!("\"{bad}\""), 1);
        assert_ne!(damaged, page);
        let (code, stdout) = parse(&[&file(&tmp, "raw.csv", damaged.as_bytes())]);
        assert_eq!(code, 3, "{bad}: {stdout}");
        assert!(
            stdout.contains("not a figure ncu prints"),
            "{bad}: {stdout}"
        );
    }
    // The coalesced launch's row damaged: the strided one still counts,
    // and the one not read is named.
    let rows: Vec<&str> = page.lines().collect();
    let damaged_row = rows[2].replacen("\"524,288\"", "\"inf\"", 1);
    assert_ne!(damaged_row, rows[2]);
    let damaged = page.replacen(rows[2], &damaged_row, 1);
    let (code, stdout) = parse(&[&file(&tmp, "raw.csv", damaged.as_bytes())]);
    assert_eq!(code, 3, "not all of it was read: {stdout}");
    assert!(
        stdout.contains("[1] uncoalesced global accesses: 3670016 excessive sectors")
            && stdout.contains(
                "1 of its launches could not be read and were not judged; first: row 3 \
                 (launch 0, gather_coalesced"
            ),
        "{stdout}"
    );
}

#[test]
fn the_tools_own_failure_line_is_never_a_finding_in_the_program() {
    // Before: "Tool execution failed: couldn't find exit code." became an
    // error finding and a failed checklist item.
    let tmp = tempfile::tempdir().unwrap();
    let log = file(
        &tmp,
        "memcheck.log",
        b"========= COMPUTE-SANITIZER\n\
          ========= Error: Target application terminated before first instrumented API call\n\
          ========= Tool execution failed: couldn't find exit code.\n",
    );
    let out = run(cudawatch().args(["parse", "--format", "json"]).arg(&log));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = crate::helpers::json(&out);
    assert!(
        report["findings"].as_array().unwrap().is_empty(),
        "{}",
        report["findings"]
    );
}

#[test]
fn csan_on_the_guides_stream_race_gates_at_the_users_racing_lines() {
    // The real H100 capture: the program exits 0 plainly and under
    // CUDA_LAUNCH_BLOCKING=1; with TORCH_CUDA_SANITIZER=1 PyTorch prints
    // its report. Before: a generic "python_exception" at line 18.
    let dir = sample("pytorch_instruments").join("stream_race");
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(dir.join("csan.stderr")));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = crate::helpers::json(&out);
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(
        findings.len(),
        1,
        "the raised exception folds into the race: {findings:?}"
    );
    let race = &findings[0];
    assert_eq!(race["kind"], "stream_race");
    assert_eq!(race["tool"], "csan");
    assert!(
        race["location"]["file"]
            .as_str()
            .unwrap()
            .ends_with("stream_race.py")
    );
    assert_eq!(race["location"]["line"], 18, "the side stream's read");
    assert_eq!(
        race["other"]["location"]["line"], 16,
        "the default stream's write"
    );
    assert_eq!(race["owner"]["owner"], "user");
    // The plain run of the same program says nothing: the race is CSAN's alone.
    let plain = std::fs::read(dir.join("plain.stderr")).unwrap();
    assert!(
        plain.is_empty(),
        "plain.stderr is empty: the program exits 0"
    );
}

#[test]
fn csan_on_a_real_prefetcher_race_names_the_users_innermost_lines() {
    // ResNet-18 training with a side-stream prefetcher that forgets
    // wait_stream (tests/gpu/pytorch/prefetch_race.py, H100 capture): the
    // side stream's write is inside prefetch() (line 22), called at line
    // 25; the default stream reads the batch at line 30. Its corrected
    // twin's CSAN run is silent and exits 0.
    let dir = sample("pytorch_instruments");
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(dir.join("prefetch_race").join("csan.stderr")));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = crate::helpers::json(&out);
    let race = crate::helpers::site_of_kind(&report, "stream_race");
    assert!(
        race["location"]["file"]
            .as_str()
            .unwrap()
            .ends_with("prefetch_race.py")
    );
    assert_eq!(race["location"]["line"], 30, "the default stream's read");
    assert_eq!(
        race["other"]["location"]["line"], 22,
        "the side stream's write, inside prefetch()"
    );
    let fixed = std::fs::read(dir.join("prefetch_race_fixed").join("csan.stderr")).unwrap();
    assert!(!String::from_utf8_lossy(&fixed).contains("CSAN detected"));
    assert_eq!(
        std::fs::read_to_string(dir.join("prefetch_race_fixed").join("csan.exit"))
            .unwrap()
            .trim(),
        "0"
    );
}

#[test]
fn an_empty_or_header_only_input_beside_good_ones_is_never_clean() {
    // Before: an ncu details page of its header alone was "CLEAN, checked:
    // ncu (1 file)", and an empty racecheck.xml beside a clean memcheck.xml
    // was "CLEAN, not given: racecheck".
    let tmp = tempfile::tempdir().unwrap();
    let details = tmp.path().join("ncu-details.csv");
    let page = std::fs::read_to_string(sample("coalescing").join("ncu-details.stdout")).unwrap();
    std::fs::write(&details, format!("{}\n", page.lines().next().unwrap())).unwrap();
    let out = run(cudawatch().arg("parse").arg(&details));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    let racecheck = tmp.path().join("racecheck.xml");
    std::fs::write(&racecheck, "").unwrap();
    let out = run(cudawatch()
        .arg("parse")
        .arg(sample("clean").join("memcheck.xml"))
        .arg(&racecheck));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("racecheck.xml"), "{}", out.stdout);
}

#[test]
fn a_passed_verdict_names_the_checks_it_could_not_judge() {
    // ncu's sector totals of zero leave the coalescing item inconclusive;
    // the PASSED line did not say so (docs/exit-codes.md promises it).
    let tmp = tempfile::tempdir().unwrap();
    let raw = std::fs::read_to_string(sample("coalescing").join("ncu-raw.stdout")).unwrap();
    let mut lines = raw.lines();
    let header = lines.next().unwrap();
    let sectors: Vec<usize> = header
        .split("\",\"")
        .enumerate()
        .filter(|(_, h)| h.contains("sectors"))
        .map(|(i, _)| i)
        .collect();
    let mut zeroed = vec![header.to_string(), lines.next().unwrap().to_string()];
    for line in lines {
        let fields: Vec<String> = line
            .trim_matches('"')
            .split("\",\"")
            .enumerate()
            .map(|(i, f)| {
                if sectors.contains(&i) {
                    "0".into()
                } else {
                    f.to_string()
                }
            })
            .collect();
        zeroed.push(format!("\"{}\"", fields.join("\",\"")));
    }
    let raw_path = tmp.path().join("ncu-raw.csv");
    std::fs::write(&raw_path, zeroed.join("\n") + "\n").unwrap();
    let details = tmp.path().join("ncu-details.csv");
    std::fs::copy(sample("coalescing").join("ncu-details.stdout"), &details).unwrap();
    let out = run(cudawatch().arg("parse").arg(&raw_path).arg(&details));
    let verdict = out
        .stdout
        .lines()
        .find(|l| l.starts_with("PASSED"))
        .unwrap_or_default()
        .to_string();
    assert!(
        verdict.contains("not checked: coalescing within thresholds"),
        "{}",
        out.stdout
    );
}
