//! What the tools printed for programs written as code outside this
//! project is (sample-reports/outside/, one H200): each record kind read as
//! its own kind with its owner and place, ncu's pages of libcu++ atomics
//! read, and an error macro's own line found, with the core dump run for it.

use std::path::PathBuf;

use serde_json::Value;

use crate::helpers::{Output, copy_dir, cudawatch, json, judged, root, run, sample, site_of_kind};
use crate::run::stage;

/// `cudawatch run --stages plain,coredump` of `program` into `tmp/run`,
/// with the fakes on PATH (no cuda-gdb reads a dump here).
fn plain_and_coredump(tmp: &std::path::Path, program: &[&std::ffi::OsStr]) -> Output {
    run(cudawatch()
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", root().join("tests/fakes").display()),
        )
        .args([
            "--color",
            "never",
            "run",
            "--stages",
            "plain,coredump",
            "--format",
            "json",
        ])
        .arg("--out-dir")
        .arg(tmp.join("run"))
        .arg("--")
        .args(program))
}

fn outside(path: &str) -> PathBuf {
    sample("outside").join(path)
}

/// A report's uninitialised-read sites.
fn uninitialised_reads(report: &Value) -> Vec<&Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "uninitialized_read")
        .collect()
}

/// `cudawatch parse --format json` of `files`.
fn parse(files: &[&str]) -> (Output, Value) {
    let out = run(cudawatch()
        .args(["--color", "never", "parse", "--format", "json"])
        .args(files.iter().map(|f| outside(f))));
    let report = json(&out);
    (out, report)
}

#[test]
fn a_host_copy_of_memory_nobody_wrote_is_its_own_kind_at_the_copying_line() {
    // As the stage runs initcheck (no host stacks): one site for 256
    // records of 32 bytes, named for what it is.
    let (out, report) = parse(&["host_api_uninit/initcheck.xml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let site = site_of_kind(&report, "uninitialized_copy");
    assert_eq!(site["count"], 256, "{site}");
    assert_eq!(report["findings"].as_array().unwrap().len(), 1);
    // With host stacks: the call and the user's native frame that made it.
    let (_, report) = parse(&["host_api_uninit/host-stacks.xml"]);
    let site = site_of_kind(&report, "uninitialized_copy");
    assert!(
        site["message"]
            .as_str()
            .unwrap()
            .starts_with("cudaMemcpy read device memory nothing wrote"),
        "{site}"
    );
    assert!(site["launch_frame"]["func"] == "main", "{site}");
    // From PyTorch: the copy is ATen's, the line that asked for it the
    // user's, so it gates there.
    let (out, report) = parse(&["torch_empty_copy/run/initcheck/host-stacks.xml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let site = site_of_kind(&report, "uninitialized_copy");
    assert_eq!(site["python_frame"]["line"], 11, "{site}");
    assert_eq!(site["owner"]["owner"], "framework");
    assert_eq!(site["owner"]["user_call"], true);
    assert!(
        site["message"]
            .as_str()
            .unwrap()
            .starts_with("cudaMemcpyAsync"),
        "{site}"
    );
    assert!(
        out.stderr.contains("torch_empty_copy.py:11"),
        "{}",
        out.stderr
    );
    // The text a user's own `compute-sanitizer --tool initcheck` printed.
    let (_, report) = parse(&["host_api_uninit/plain.out"]);
    let site = site_of_kind(&report, "uninitialized_copy");
    assert!(
        site["message"]
            .as_str()
            .unwrap()
            .starts_with("cudaMemcpy read"),
        "{site}"
    );
    // explain knows it.
    let explained = run(cudawatch().args(["explain", "uninitialized_copy"]));
    assert_eq!(explained.code, 0, "{}", explained.stderr);
    assert!(
        explained
            .stdout
            .contains("Host API uninitialized memory access"),
        "{}",
        explained.stdout
    );
}

#[test]
fn the_rerun_with_host_stacks_gives_a_stackless_copy_its_copying_line() {
    // The run as it was captured: initcheck without host stacks (one site,
    // no line), then the rerun with them (`host-stacks.xml`), whose copy is
    // a site of its own line. Re-rendered, the stage's site takes the line
    // (it did not: the rerun's site id has the line, the stage's does not).
    let report = judged(&outside("torch_empty_copy/run"));
    let site = site_of_kind(&report, "uninitialized_copy");
    assert_eq!(site["count"], 256, "{site}");
    assert_eq!(site["python_frame"]["line"], 11, "{site}");
    assert!(
        site["python_frame"]["file"]
            .as_str()
            .unwrap()
            .ends_with("torch_empty_copy.py"),
        "{site}"
    );
    // ATen's copy, asked for by the user's line: it gates there.
    assert_eq!(site["owner"]["owner"], "framework", "{site}");
    assert_eq!(site["owner"]["user_call"], true, "{site}");
    assert_eq!(report["exit_code"], 1);
    let verdict = report["verdict"].to_string();
    assert!(verdict.contains("torch_empty_copy.py:11"), "{verdict}");
}

/// initcheck's stage reason in the judged report of `dir`.
fn initcheck_reason(dir: &std::path::Path) -> String {
    stage(&judged(dir), "initcheck")["reason"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_copy_left_without_a_line_says_why_it_has_none() {
    // Placed by the rerun: nothing to explain.
    let placed = initcheck_reason(&outside("torch_empty_copy/run"));
    assert!(!placed.contains("without a launching line"), "{placed}");
    // The same run whose rerun left no records (stopped before it wrote
    // them): the copy has no line, and the stage says why.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_dir(&outside("torch_empty_copy/run"), &run);
    std::fs::remove_file(run.join("initcheck/host-stacks.xml")).unwrap();
    let report = judged(&run);
    let site = site_of_kind(&report, "uninitialized_copy");
    assert!(site["python_frame"].is_null(), "{site}");
    let reason = initcheck_reason(&run);
    assert!(
        reason.contains(
            "1 host copy site without a launching line: the second run with host call \
             stacks left no records"
        ),
        "{reason}"
    );
    // A rerun whose records came back without stacks too (EfficientNet's
    // copies did, on the H200): said so, not left to guess.
    std::fs::copy(
        run.join("initcheck/initcheck.xml"),
        run.join("initcheck/host-stacks.xml"),
    )
    .unwrap();
    let reason = initcheck_reason(&run);
    assert!(
        reason.contains(
            "without a launching line: compute-sanitizer kept no call stack for the copies, \
             not even in the second run with host call stacks (host-stacks.xml)"
        ),
        "{reason}"
    );
    std::fs::remove_file(run.join("initcheck/host-stacks.xml")).unwrap();
    // And where no rerun was made at all.
    let stage_json = run.join("initcheck/stage.json");
    let mut stage: Value = serde_json::from_slice(&std::fs::read(&stage_json).unwrap()).unwrap();
    stage.as_object_mut().unwrap().remove("imports");
    std::fs::write(&stage_json, stage.to_string()).unwrap();
    let reason = initcheck_reason(&run);
    assert!(
        reason.contains(
            "without a launching line: initcheck ran without host call stacks (for speed), \
             and no second run with them was made"
        ),
        "{reason}"
    );
}

#[test]
fn a_stack_overflow_is_one_site_of_its_own_kind_at_the_users_line() {
    let (out, report) = parse(&["stack_overflow/memcheck.xml", "stack_overflow/memcheck.out"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let site = site_of_kind(&report, "stack_overflow");
    assert_eq!(site["location"]["line"], 8, "{site}");
    assert_eq!(site["kernel"], "depth_sum");
    assert_eq!(site["owner"]["owner"], "user");
    assert_eq!(site["severity"], "error");
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert!(!kinds.contains(&"unrecognised"), "{kinds:?}");
    let explained = run(cudawatch().args(["explain", "stack_overflow"]));
    assert!(
        explained.stdout.contains("call stack"),
        "{}",
        explained.stdout
    );
}

#[test]
fn the_core_dumps_view_of_a_stack_overflow_follows_memchecks_record_of_it() {
    // Every stage and the core dump on the H200: memcheck names the stack
    // overflow at the function's line, the dump the same fault as an
    // out-of-range address at the store that ran off the stack. One fault:
    // memcheck's record leads, the dump's view follows it (it led, as a
    // second error site, when an invalid access of any tool came first).
    let report = judged(&outside("stack_overflow/run"));
    let root = site_of_kind(&report, "stack_overflow");
    assert_eq!(root["location"]["line"], 8, "{root}");
    assert!(root["consequence_of"].is_null(), "{root}");
    assert!(
        root["seen_by"]
            .as_array()
            .unwrap()
            .contains(&"coredump".into()),
        "{root}"
    );
    let dump = site_of_kind(&report, "invalid_access");
    assert_eq!(dump["tool"], "coredump", "{dump}");
    assert_eq!(dump["consequence_of"], root["id"], "{dump}");
    let leading: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["consequence_of"].is_null() && s["severity"] == "error")
        .collect();
    assert_eq!(leading.len(), 1, "{leading:?}");
    let verdict = report["verdict"].to_string();
    assert!(
        verdict.contains("root cause: memcheck stack_overflow at stack_overflow.cu:8"),
        "{verdict}"
    );
}

#[test]
fn ncus_page_of_libcu_atomics_is_read_with_its_rows_and_its_owner_is_the_kernels() {
    let dir = "libcu_atomics/run/ncu";
    let (out, report) = parse(&[&format!("{dir}/raw.csv"), &format!("{dir}/source-0.csv")]);
    // Read whole (it was "malformed CSV ... \"Atomic\" is not a figure"):
    // the atomic's line in CUDA's header with its sectors, in the user's
    // kernel, so the user's.
    assert_ne!(out.code, 3, "{}", out.stderr);
    assert!(
        report["warnings"].as_array().is_none_or(|w| w.is_empty()),
        "{}",
        report["warnings"]
    );
    let lines = report["wasteful_lines"].as_array().unwrap();
    let atomic = lines
        .iter()
        .find(|l| l["location"]["line"] == 2367)
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(atomic["excessive_sectors"], 759808.0);
    assert_eq!(atomic["access"], "Atomic");
    assert!(
        atomic["location"]["file"]
            .as_str()
            .unwrap()
            .ends_with("cuda_ptx_generated.h")
    );
    assert!(
        atomic["source"]
            .as_str()
            .unwrap()
            .starts_with("{ asm volatile(\"atom.add.relaxed.gpu.u32 %0,[%1],%2;\""),
        "{atomic}"
    );
    let site = site_of_kind(&report, "uncoalesced_access");
    assert_eq!(site["owner"]["owner"], "user", "{site}");
}

#[test]
fn an_error_macros_own_line_is_a_site_and_the_core_dump_runs_for_it() {
    // The program's own words on its plain run (CUDA_LAUNCH_BLOCKING=1: the
    // launch's line), and its exit 1, replayed.
    let tmp = tempfile::tempdir().unwrap();
    let program = tmp.path().join("error_macro");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\ncat {} >&2\nexit 1\n",
            outside("error_macro/run/plain/stderr").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let out = plain_and_coredump(tmp.path(), &[program.as_os_str()]);
    let report = json(&out);
    let site = site_of_kind(&report, "cuda_error");
    assert_eq!(site["error"], "cudaErrorIllegalAddress", "{site}");
    assert_eq!(site["location"]["line"], 41, "{site}");
    assert!(
        site["location"]["file"]
            .as_str()
            .unwrap()
            .ends_with("error_macro.cu")
    );
    // The core dump stage was run for it, not "not needed" (this program
    // writes no dump: the stage says so).
    let coredump = stage(&report, "coredump");
    assert!(
        !coredump["reason"]
            .as_str()
            .unwrap()
            .starts_with("not needed"),
        "{coredump}"
    );
    assert!(coredump["end"].is_object(), "{coredump}");
    assert_eq!(out.code, 1, "{}", out.stderr);
}

#[test]
fn compute_sanitizer_2026_4s_duplicate_kernel_records_are_its_own_failure_not_clean() {
    let (out, report) = parse(&["duplicate_kernels/memcheck.xml"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(report["findings"].as_array().unwrap().is_empty());
    let said = report["warnings"].to_string();
    assert!(said.contains("Duplicate entry kernels named"), "{said}");
}

#[test]
fn a_record_kind_a_newer_tool_prints_is_a_warning_the_verdict_names_never_a_gating_error() {
    // A real initcheck capture whose records a newer release might call
    // something else.
    let tmp = tempfile::tempdir().unwrap();
    let xml = std::fs::read_to_string(sample("uninit_read").join("initcheck.xml"))
        .unwrap()
        .replace(
            "<kind>Initcheck</kind>",
            "<kind>InitcheckFutureError</kind>",
        );
    let path = tmp.path().join("initcheck.xml");
    std::fs::write(&path, xml).unwrap();
    let out = run(cudawatch()
        .args(["--color", "never", "parse", "--format", "json"])
        .arg(&path));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    let site = site_of_kind(&report, "unrecognised");
    assert_eq!(site["severity"], "warning", "{site}");
    let verdict = report["verdict"].to_string();
    assert!(
        verdict.contains("of a record kind cudawatch does not know")
            && verdict.contains("InitcheckFutureError"),
        "{verdict}"
    );
    // --fail-on warning gates it, as every warning.
    let strict = run(cudawatch()
        .args(["parse", "--fail-on", "warning"])
        .arg(&path));
    assert_eq!(strict.code, 1, "{}", strict.stderr);
}

#[test]
fn a_plain_run_that_died_of_a_signal_gets_the_core_dump_which_says_when_the_host_crashed() {
    // An abort with no message cudawatch knows: the GPU may have faulted
    // (the dump would say where) or the host crashed (no dump).
    let tmp = tempfile::tempdir().unwrap();
    let out = plain_and_coredump(
        tmp.path(),
        &[
            "sh".as_ref(),
            "-c".as_ref(),
            "echo 'worker died'; kill -ABRT $$".as_ref(),
        ],
    );
    let report = json(&out);
    let coredump = stage(&report, "coredump");
    assert!(coredump["end"].is_object(), "it ran: {coredump}");
    assert_eq!(coredump["outcome"], "skipped", "{coredump}");
    assert!(
        coredump["reason"]
            .as_str()
            .unwrap()
            .contains("the crash was the host's"),
        "{coredump}"
    );
    // The plain run's failure decides; the dump's absence is no doubt.
    assert_eq!(out.code, 1, "{}", out.stderr);
}

#[test]
fn an_error_macros_wild_read_is_placed_by_the_core_dump_at_the_kernels_line() {
    // `cudawatch run --stages plain,coredump` on the H200: the program's
    // own line (`error_macro_read.cu:44 an illegal memory access was
    // encountered`, the graph's launch) and the dump's fault in `gather`
    // at the read through the wild index. The dump leads; the program's
    // line follows from it.
    let report = judged(&outside("error_macro_read/run"));
    let root = site_of_kind(&report, "invalid_access");
    assert_eq!(root["tool"], "coredump", "{root}");
    assert_eq!(root["kernel"], "gather", "{root}");
    assert_eq!(root["location"]["line"], 22, "{root}");
    assert_eq!(root["owner"]["owner"], "user", "{root}");
    let own_line = site_of_kind(&report, "cuda_error");
    assert_eq!(own_line["location"]["line"], 44, "{own_line}");
    assert_eq!(own_line["consequence_of"], root["id"], "{own_line}");
    assert_eq!(report["exit_code"], 1);
    // error_macro.cu's wild write, the same way: the plain run's site, and
    // the core dump's honest "no device exception this time" (the H200 let
    // that write pass under the dump's settings, at three offsets).
    let report = judged(&outside("error_macro/run"));
    let dump = stage(&report, "coredump");
    assert!(
        dump["reason"]
            .as_str()
            .unwrap()
            .contains("the program met no device exception this time"),
        "{dump}"
    );
    assert_eq!(site_of_kind(&report, "cuda_error")["location"]["line"], 41);
}

#[test]
fn atens_reduction_on_autograds_thread_in_a_correct_script_does_not_gate() {
    // A correct GNN script (tests/gpu/real/train_gnn.py) under initcheck
    // as its stage runs it on the H200: ATen's reduction of the Linears'
    // bias gradients reads its own staging buffer's unused lanes on
    // autograd's thread, and the rerun with host stacks kept no stack for
    // those records. Before, it gated as the user's call: FINDINGS.
    let report = judged(&outside("gnn_backward_reduce/run"));
    assert_eq!(report["exit_code"], 0, "{}", report["verdict"]);
    let reads = uninitialised_reads(&report);
    assert_eq!(reads.len(), 2, "{}", report["findings"]);
    for site in reads {
        assert_eq!(site["kernel"], "reduce_kernel", "{site}");
        assert_eq!(site["owner"]["owner"], "framework", "{site}");
        assert!(site["owner"].get("user_call").is_none(), "{site}");
        assert_eq!(site["stackless_with_stacks"], true, "{site}");
    }
    assert_eq!(
        report["verdict"][0]["label"], "clean",
        "{}",
        report["verdict"]
    );
    // Without the rerun nothing shows the records had no stack to give:
    // an ATen read then still counts as the user's call, and gates.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_dir(&outside("gnn_backward_reduce/run"), &run);
    std::fs::remove_file(run.join("initcheck/host-stacks.xml")).unwrap();
    let unproven = judged(&run);
    assert_eq!(unproven["exit_code"], 1, "{}", unproven["verdict"]);
}

#[test]
fn atens_staging_read_at_the_users_line_is_its_own_when_the_run_with_tensors_filled_reads_it_too() {
    // A correct tabular script (tests/gpu/real/train_tabular.py) under
    // initcheck as its stage runs it on the H200: ATen's reduction at the
    // user's `X_train.mean(0)`, `X_train.std(0)` reads never-written
    // memory on the main thread. The rerun with every tensor PyTorch
    // allocates filled reads the same three sites uninitialised again:
    // memory no tensor holds, ATen's staging buffer. Before, FINDINGS.
    let report = judged(&outside("tabular_standardise/run"));
    assert_eq!(report["exit_code"], 0, "{}", report["verdict"]);
    assert_eq!(
        report["verdict"][0]["label"], "clean",
        "{}",
        report["verdict"]
    );
    let reads = uninitialised_reads(&report);
    assert_eq!(reads.len(), 3, "{}", report["findings"]);
    for site in reads {
        assert_eq!(site["kernel"], "reduce_kernel", "{site}");
        assert_eq!(site["read_with_tensors_filled"], true, "{site}");
        assert_eq!(site["owner"]["owner"], "framework", "{site}");
        assert!(
            site["owner"]["component"]
                .as_str()
                .unwrap()
                .contains("its own scratch memory"),
            "{site}"
        );
        assert!(site["owner"].get("user_call").is_none(), "{site}");
    }
    let reason = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "initcheck")
        .unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains(
            "3 sites read uninitialised again with every tensor PyTorch allocates filled \
             (tensors-filled/initcheck.xml)"
        ),
        "{reason}"
    );
    // Without the rerun's records, or where its hook could not turn the
    // fill on, nothing shows the memory is no tensor: the user's call.
    for damage in ["records", "fill"] {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        copy_dir(&outside("tabular_standardise/run"), &run);
        let filled = run.join("initcheck/tensors-filled");
        if damage == "records" {
            std::fs::remove_file(filled.join("initcheck.xml")).unwrap();
        } else {
            let facts = std::fs::read_to_string(filled.join("hook.json")).unwrap();
            std::fs::write(
                filled.join("hook.json"),
                facts.replace("\"tensors_filled\":true", "\"tensors_filled\":false"),
            )
            .unwrap();
        }
        let unproven = judged(&run);
        assert_eq!(
            unproven["exit_code"], 1,
            "{damage}: {}",
            unproven["verdict"]
        );
    }
}

#[test]
fn a_feature_column_nobody_wrote_gates_as_the_users_call() {
    // Its twin with a column allocated by `torch.empty` and never
    // written: 300,980 records in ATen's reductions and elementwise
    // kernel, a flood, so no rerun was made; the reads are the user's.
    let report = judged(&outside("tabular_missing_feature/run"));
    assert_eq!(report["exit_code"], 1, "{}", report["verdict"]);
    let reads = uninitialised_reads(&report);
    assert_eq!(reads.len(), 3, "{}", report["findings"]);
    for site in reads {
        assert_eq!(site["owner"]["user_call"], true, "{site}");
        assert!(site.get("read_with_tensors_filled").is_none(), "{site}");
    }
}
