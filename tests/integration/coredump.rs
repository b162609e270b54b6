//! The coredump stage against a program and a cuda-gdb that replay the H100
//! captures of `sample-reports/coredump/` (tests/fakes/coredump-program,
//! tests/fakes/cuda-gdb-minimal).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::helpers::{Output, captured, cudawatch, root, run, sample};
use crate::run::stage;

/// `cudawatch run --stages STAGES` of the captured `case`, with the fake
/// reader on PATH when `reader` (else no cuda-gdb anywhere).
fn coredump_run(case: &str, out_dir: &Path, stages: &str, reader: bool) -> Command {
    coredump_run_with(case, out_dir, stages, reader, &[])
}

/// The same with more `run` flags.
fn coredump_run_with(
    case: &str,
    out_dir: &Path,
    stages: &str,
    reader: bool,
    extra: &[&std::ffi::OsStr],
) -> Command {
    let dir = sample(&format!("coredump/{case}"));
    let bin = out_dir.with_extension("bin");
    std::fs::create_dir_all(&bin).unwrap();
    if reader {
        let fake = root().join("tests/fakes/cuda-gdb-minimal");
        let _ = std::os::unix::fs::symlink(fake, bin.join("cuda-gdb-minimal"));
    }
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let mut cmd = cudawatch();
    cmd.env("PATH", path)
        .env_remove("CUDA_HOME")
        .env("FAKE_COREDUMP_CASE", &dir)
        .arg("run")
        .args(["--out-dir", out_dir.to_str().unwrap(), "--stages", stages])
        .args(["--grace", "0.5", "--format", "json"])
        .args(extra)
        .arg("--")
        .arg(root().join("tests/fakes/coredump-program"))
        .arg(&dir);
    cmd
}

/// A run of the captured `case` that exits 1 (the program fails in each):
/// its folder (kept while the first value lives), its output, its judged
/// report.
fn failing(case: &str, stages: &str) -> (tempfile::TempDir, PathBuf, Output, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let out = run(coredump_run(case, &out_dir, stages, true));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = judged(&out.stdout);
    (tmp, out_dir, out, report)
}

/// The judged report `--format json` printed (report.json on disk is the
/// report before judging: consequences are linked when it is read).
fn judged(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap()
}

fn sites(report: &serde_json::Value) -> Vec<serde_json::Value> {
    report["findings"].as_array().unwrap().clone()
}

fn site_of<'a>(sites: &'a [serde_json::Value], tool: &str) -> &'a serde_json::Value {
    sites
        .iter()
        .find(|s| s["tool"] == tool)
        .unwrap_or_else(|| panic!("no {tool} site in {sites:?}"))
}

fn dumps_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("core.")
        })
        .collect()
}

#[test]
fn a_fault_inside_a_cuda_graph_is_placed_at_its_kernel_and_line_by_the_dump() {
    // Plainly the error surfaces at the synchronize after the graph
    // (cudaErrorInvalidAddressSpace at graph_wild_index.cu:44), no kernel
    // named; the dump names scatter and the faulting line, 15.
    let (_tmp, out_dir, out, report) = failing("graph_wild_index", "plain,coredump");
    let all = sites(&report);
    let dump = site_of(&all, "coredump");
    // The wild address fell outside the global window: the hardware calls
    // it Invalid Address Space, a kind of its own (issue 59).
    assert_eq!(dump["kind"], "invalid_address_space", "{dump}");
    assert_eq!(dump["kernel"], "scatter", "{dump}");
    assert_eq!(dump["location"]["line"], 15, "{dump}");
    assert!(
        dump["location"]["file"]
            .as_str()
            .unwrap()
            .ends_with("graph_wild_index.cu"),
        "{dump}"
    );
    assert_eq!(dump["samples"][0]["block"]["x"], 16, "{dump}");
    assert_eq!(dump["samples"][0]["thread"]["x"], 224, "{dump}");
    // The plain run's error follows from it, and the verdict leads with it.
    let plain = site_of(&all, "plain");
    assert_eq!(plain["consequence_of"], dump["id"], "{plain}");
    assert!(
        out.stderr
            .contains(&format!("root cause: coredump invalid_address_space at {}: GPU core dump: Warp Invalid Address Space in scatter; it explains the plain run's cudaErrorIllegalAddress at {}", captured("tests/gpu/coredump/graph_wild_index.cu:15"), captured("tests/gpu/coredump/graph_wild_index.cu:43"))),
        "{}",
        out.stderr
    );
    // Read, then deleted; what the reader printed is kept.
    let folder = out_dir.join("coredump");
    assert!(dumps_in(&folder).is_empty(), "{:?}", dumps_in(&folder));
    let reads: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("read-"))
        .collect();
    assert_eq!(reads.len(), 2, "the reader's stdout and stderr: {reads:?}");
}

#[test]
fn keep_dumps_keeps_them() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let mut cmd = coredump_run("misaligned", &out_dir, "plain,coredump", true);
    cmd.env("CUDAWATCH_KEEP_DUMPS", "true");
    let out = run(cmd);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(dumps_in(&out_dir.join("coredump")).len(), 1);
    let report = judged(&out.stdout);
    let dump = site_of(&sites(&report), "coredump").clone();
    assert_eq!(dump["error"], "cudaErrorMisalignedAddress", "{dump}");
    assert_eq!(dump["location"]["line"], 6, "{dump}");
}

#[test]
fn a_triton_kernel_replayed_in_a_torch_cuda_graph_gets_its_line_and_the_replay_line() {
    // The dump names the Triton kernel's own line in the user's file (15);
    // the plain run (CUDA_LAUNCH_BLOCKING=1) surfaced the error at
    // graph.replay() (line 43): the site is launched from there.
    let (_tmp, _, _, report) = failing("torch_graph_triton_oob", "plain,coredump");
    let dump = site_of(&sites(&report), "coredump").clone();
    assert_eq!(dump["kernel"], "gather", "{dump}");
    assert_eq!(dump["location"]["line"], 15, "{dump}");
    assert_eq!(dump["python_frame"]["line"], 43, "{dump}");
    assert_eq!(dump["launch_seen_by"], "plain", "{dump}");
    assert_eq!(dump["owner"]["owner"], "user", "{dump}");
}

#[test]
fn a_dump_the_reader_cannot_read_still_names_the_exception_and_kernel() {
    // The light dump of a device assert crashed cuda-gdb-minimal on the
    // H100 ("internal-error ... m_num_devices > 0"): the driver's progress
    // lines still name the assert and the kernel; the line is the
    // program's own assert message's, and the plain run's assert leads.
    let (_tmp, _, _, report) = failing("device_assert", "plain,coredump");
    let all = sites(&report);
    let dump = site_of(&all, "coredump");
    assert_eq!(dump["kind"], "device_assert", "{dump}");
    assert_eq!(dump["kernel"], "check_positive", "{dump}");
    assert_eq!(dump["location"]["line"], 7, "{dump}");
    let plain = all
        .iter()
        .find(|s| s["tool"] == "plain" && s["kind"] == "device_assert")
        .unwrap();
    assert_eq!(dump["consequence_of"], plain["id"], "{dump}");
    let reason = stage(&report, "coredump")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("1 dump not read (cuda-gdb could not read it"),
        "{reason}"
    );
}

#[test]
fn without_cuda_gdb_the_stage_says_so_and_keeps_the_kernel() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let out = run(coredump_run(
        "graph_wild_index",
        &out_dir,
        "plain,coredump",
        false,
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = judged(&out.stdout);
    let dump = site_of(&sites(&report), "coredump").clone();
    assert_eq!(dump["kernel"], "scatter", "{dump}");
    assert!(
        dump["location"].is_null(),
        "no line without a reader: {dump}"
    );
    let reason = stage(&report, "coredump")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("no cuda-gdb was found on PATH"), "{reason}");
    // The dump is left for the user to read elsewhere? No: deleted as
    // always unless kept; the report says what the driver said.
    assert!(dumps_in(&out_dir.join("coredump")).is_empty());
}

#[test]
fn a_clean_program_needs_no_dump_and_stays_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let out = run(coredump_run("clean", &out_dir, "plain,coredump", true));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = judged(&out.stdout);
    let s = stage(&report, "coredump");
    assert_eq!(s["outcome"], "skipped", "{s}");
    assert!(
        s["reason"].as_str().unwrap().starts_with("not needed"),
        "{s}"
    );
    // Not a gap in what CLEAN vouches for.
    let verdict = out
        .stderr
        .lines()
        .find(|l| l.starts_with("CLEAN"))
        .unwrap_or_default()
        .to_string();
    assert!(!verdict.contains("coredump"), "{verdict}");
    // But the terminal names it, as every other format does (before, only
    // the JSON, HTML and Markdown did).
    assert!(
        out.stderr
            .contains("coredump not needed: the plain run met no device exception"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_fault_that_did_not_come_back_under_the_dump_is_inconclusive_not_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let mut cmd = coredump_run("graph_wild_index", &out_dir, "plain,coredump", true);
    cmd.env("FAKE_NO_DUMP", "1");
    let out = run(cmd);
    assert_eq!(
        out.code, 1,
        "the plain run's error still gates: {}",
        out.stderr
    );
    let report = judged(&out.stdout);
    let s = stage(&report, "coredump");
    assert_eq!(s["outcome"], "inconclusive", "{s}");
    assert!(s["blocked_by"].as_str().is_some(), "{s}");
    assert!(
        s["reason"]
            .as_str()
            .unwrap()
            .contains("without writing a core dump"),
        "{s}"
    );
}

#[test]
fn memcheck_and_the_dump_agree_on_one_site_with_memchecks_record_leading() {
    // Both ran: memcheck's record (the address, the access size) leads;
    // the dump's view of the same kernel's fault is folded under it.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let fake = root().join("tests/fakes/compute-sanitizer");
    let mut cmd = coredump_run_with(
        "misaligned",
        &out_dir,
        "plain,coredump,memcheck",
        true,
        &["--compute-sanitizer".as_ref(), fake.as_os_str()],
    );
    cmd.env("FAKE_CASE", sample("misaligned"));
    let out = run(cmd);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = judged(&out.stdout);
    let all = sites(&report);
    let memcheck = all
        .iter()
        .find(|s| s["tool"] == "memcheck" && s["kind"] == "invalid_access")
        .unwrap_or_else(|| panic!("{all:?}"));
    let dump = site_of(&all, "coredump");
    assert_eq!(dump["consequence_of"], memcheck["id"], "{dump}");
    // One fault, its tools named where it leads.
    assert_eq!(
        memcheck["seen_by"],
        serde_json::json!(["coredump"]),
        "{memcheck}"
    );
    assert!(
        out.stderr.contains("root cause: memcheck invalid_access")
            && out.stderr.contains("    also seen by: coredump\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn explain_knows_the_exceptions_a_dump_names() {
    for (exception, error) in [
        ("Warp Misaligned Address", "cudaErrorMisalignedAddress"),
        (
            "CUDA Exception: Warp Invalid Address Space",
            "cudaErrorInvalidAddressSpace",
        ),
        (
            "CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS",
            "cudaErrorIllegalAddress",
        ),
    ] {
        let out = run(cudawatch().args(["explain", exception]));
        assert_eq!(out.code, 0, "{exception}: {}", out.stderr);
        assert!(out.stdout.starts_with(error), "{exception}: {}", out.stdout);
        assert!(out.stdout.contains("GPU core dump"), "{}", out.stdout);
    }
}

#[test]
fn a_saved_run_renders_the_dumps_finding_again() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let out = run(coredump_run(
        "graph_wild_index",
        &out_dir,
        "plain,coredump",
        true,
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let again = run(cudawatch().arg("report").arg(&out_dir));
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(
        again.stdout.contains(&format!(
            "root cause: coredump invalid_address_space at {}",
            captured("tests/gpu/coredump/graph_wild_index.cu:15")
        )),
        "{}",
        again.stdout
    );
}

#[test]
fn a_memcheck_asked_for_that_could_not_start_is_not_called_missing() {
    // The verdict used to say "no memcheck ran ...: cudawatch run --stages
    // plain,memcheck" to a user who had asked for memcheck.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let missing = tmp.path().join("no-such-compute-sanitizer");
    let out = run(coredump_run_with(
        "graph_wild_index",
        &out_dir,
        "plain,memcheck",
        false,
        &["--compute-sanitizer".as_ref(), missing.as_os_str()],
    ));
    // One line, last: inconclusive (memcheck could not run), with the
    // findings the plain run made.
    let verdict = out
        .stderr
        .lines()
        .find(|l| l.starts_with("INCONCLUSIVE: with findings:"))
        .unwrap_or_default()
        .to_string();
    assert!(
        verdict.contains(
            "(memcheck could not run to the end to find where it started: see its stage)"
        ),
        "{}",
        out.stderr
    );
    assert!(!verdict.contains("--stages plain,memcheck"), "{verdict}");
}

#[test]
fn a_dump_read_without_the_drivers_progress_lines_is_still_a_finding() {
    // The progress lines go to the program's stderr; a program that closes
    // or redirects it leaves none, and the dump alone must still count.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let mut cmd = coredump_run("graph_wild_index", &out_dir, "plain,coredump", true);
    cmd.env("FAKE_NO_PROGRESS", "1");
    let out = run(cmd);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = judged(&out.stdout);
    let dump = site_of(&sites(&report), "coredump").clone();
    assert_eq!(dump["kernel"], "scatter", "{dump}");
    assert_eq!(dump["location"]["line"], 15, "{dump}");
}

#[test]
fn a_dump_reader_that_never_ends_is_stopped_and_the_dump_is_said_unread() {
    // docs/untrusted-input.md: each dump is read by cuda-gdb under a limit
    // (120 s, or the stage's own if shorter); a reader that hangs on a dump
    // is stopped there, and the run ends with what the driver said.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let mut cmd = coredump_run_with(
        "graph_wild_index",
        &out_dir,
        "plain,coredump",
        true,
        &["--timeout".as_ref(), "3".as_ref()],
    );
    cmd.env("FAKE_READ_HANG", "1");
    let started = std::time::Instant::now();
    let out = run(cmd);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let report = judged(&out.stdout);
    let reason = stage(&report, "coredump")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("1 dump not read"), "{reason}");
    assert_ne!(stage(&report, "coredump")["outcome"], "clean", "{reason}");
}
