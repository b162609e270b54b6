//! Every record kind one GPU produced (sample-reports/records/, issue 59):
//! each case's saved run re-judged with `cudawatch report`, and the text a
//! user's own compute-sanitizer printed read with `cudawatch parse`. Each
//! fault is its own kind, at the kernel's line, one site with the tools
//! that saw it; nothing a tool printed is left unrecognised.

use crate::helpers::{cudawatch, json, run, sample};

/// The sites of a report: (tool, kind, line, message, seen_by).
fn sites(report: &serde_json::Value) -> Vec<(String, String, Option<u64>, String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["tool"].as_str().unwrap_or_default().to_string(),
                s["kind"].as_str().unwrap_or_default().to_string(),
                s["location"]["line"].as_u64(),
                s["message"].as_str().unwrap_or_default().to_string(),
                s["seen_by"].to_string(),
            )
        })
        .collect()
}

/// The verdict's line.
fn verdict(report: &serde_json::Value) -> String {
    report["verdict"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The saved run of a case, judged again.
fn rejudged(case: &str) -> serde_json::Value {
    let out = run(cudawatch()
        .args(["--color", "never", "report", "--format", "json"])
        .arg(sample("records").join(case).join("run")));
    assert_eq!(out.code, 1, "{case}: {}", out.stderr);
    json(&out)
}

/// What `cudawatch parse` makes of the text the user's own command printed.
fn parsed(case: &str) -> serde_json::Value {
    let out = run(cudawatch()
        .args(["--color", "never", "parse", "--format", "json"])
        .arg(sample("records").join(case).join("user.out")));
    json(&out)
}

/// The one site of `kind` by `tool`, at `line` where given.
fn has(report: &serde_json::Value, tool: &str, kind: &str, line: Option<u64>) -> String {
    let all = sites(report);
    let found: Vec<_> = all
        .iter()
        .filter(|s| s.0 == tool && s.1 == kind && (line.is_none() || s.2 == line))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {tool} {kind} site at {line:?}: {all:#?}"
    );
    found[0].3.clone()
}

/// Every kind in a report is one cudawatch knows.
fn nothing_unrecognised(report: &serde_json::Value, case: &str) {
    let all = sites(report);
    assert!(
        !all.iter().any(|s| s.1 == "unrecognised"),
        "{case}: {all:#?}"
    );
}

#[test]
fn each_hardware_exception_is_a_kind_of_its_own_at_the_kernels_line() {
    for (case, kind, line, message) in [
        ("misaligned_pc", "invalid_pc", 27, "Invalid PC"),
        ("trap", "trap", 33, "Trace/breakpoint trap"),
        ("breakpoint", "trap", 38, "Trace/breakpoint trap"),
    ] {
        let report = rejudged(case);
        nothing_unrecognised(&report, case);
        assert_eq!(
            has(&report, "memcheck", kind, Some(line)),
            message,
            "{case}"
        );
        // The verdict leads with it, and what the program saw follows it.
        let root = verdict(&report);
        assert!(
            root.starts_with(&format!("root cause: memcheck {kind} at ")),
            "{case}: {root}"
        );
        // From the text a user's own compute-sanitizer printed, the same.
        let text = parsed(case);
        nothing_unrecognised(&text, case);
        has(&text, "memcheck", kind, Some(line));
    }
}

#[test]
fn a_fault_that_memcheck_and_the_dump_both_saw_is_one_site_with_both_tools() {
    let report = rejudged("misaligned_pc");
    let all = sites(&report);
    let memcheck = all
        .iter()
        .find(|s| s.1 == "invalid_pc" && s.0 == "memcheck")
        .unwrap();
    assert!(memcheck.4.contains("coredump"), "{all:#?}");
    // The dump's fault is at an address with no code: no line to give,
    // and not for want of -lineinfo (the program was built with it).
    let dump = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "coredump")
        .unwrap();
    let reason = dump["reason"].as_str().unwrap();
    assert!(
        reason.contains("at no line (the faulting address holds no code of the kernel's)"),
        "{reason}"
    );
    // A jump far out of range: memcheck has no record, the dump calls it an
    // illegal instruction, and that is the root cause.
    let report = rejudged("out_of_range_pc");
    has(&report, "coredump", "illegal_instruction", None);
    let root = &verdict(&report);
    assert!(
        root.starts_with("root cause: coredump illegal_instruction"),
        "{root}"
    );
}

#[test]
fn device_heap_errors_are_their_own_kind_and_the_root_cause() {
    for (case, line, what) in [
        ("double_free", 77, "Device-side double free"),
        ("free_invalid", 81, "Invalid pointer to device-side free"),
    ] {
        let report = rejudged(case);
        nothing_unrecognised(&report, case);
        let message = has(&report, "memcheck", "device_heap_error", Some(line));
        assert_eq!(message, format!("device heap: {what}"), "{case}");
        let root = &verdict(&report);
        assert!(
            root.starts_with("root cause: memcheck device_heap_error at "),
            "{case}: {root}"
        );
        let text = parsed(case);
        nothing_unrecognised(&text, case);
        has(&text, "memcheck", "device_heap_error", Some(line));
    }
    // The bad free ended in an illegal address inside free(): the dump's
    // view of the same fault, folded under memcheck's record.
    let report = rejudged("free_invalid");
    let heap = sites(&report)
        .into_iter()
        .find(|s| s.1 == "device_heap_error")
        .unwrap();
    assert!(heap.4.contains("coredump"), "{heap:?}");
}

#[test]
fn a_device_heap_leak_says_so_beside_a_cudamalloc_leak() {
    for report in [rejudged("heap_leak"), parsed("heap_leak")] {
        let leaks: Vec<String> = sites(&report)
            .into_iter()
            .filter(|s| s.1 == "leak")
            .map(|s| s.3)
            .collect();
        assert!(
            leaks
                .iter()
                .any(|m| m == "device-heap memory (malloc in a kernel) never freed")
                && leaks
                    .iter()
                    .any(|m| m.starts_with("device memory allocated in main")),
            "{leaks:?}"
        );
    }
}

#[test]
fn shared_local_and_global_access_errors_keep_their_space() {
    for (case, line, space) in [
        ("null_read", 69, "Invalid __global__ read"),
        ("shared_past_end", 55, "Invalid __shared__ write"),
        ("local_past_end", 64, "Invalid __local__ write"),
    ] {
        let report = rejudged(case);
        nothing_unrecognised(&report, case);
        let message = has(&report, "memcheck", "invalid_access", Some(line));
        assert!(message.starts_with(space), "{case}: {message}");
    }
}

#[test]
fn synccheck_racecheck_and_initcheck_records_of_the_corpus_are_known() {
    let report = rejudged("syncwarp_mask");
    assert_eq!(
        has(&report, "synccheck", "barrier_error", Some(97)),
        "barrier error: Invalid arguments"
    );
    let report = rejudged("shared_hazards");
    nothing_unrecognised(&report, "shared_hazards");
    assert!(
        sites(&report)
            .iter()
            .any(|s| s.0 == "racecheck" && s.1 == "race")
    );
    // --racecheck-report all, as the user typed it: hazards.
    let text = parsed("shared_hazards");
    assert!(sites(&text).iter().any(|s| s.1 == "hazard"), "{text}");
    // --track-unused-memory: 75% of an allocation never written.
    let text = parsed("unused_memory");
    has(&text, "initcheck", "unused_memory", None);
}

#[test]
fn an_atomic_the_compiler_replaced_with_a_trap_is_a_trap_in_its_kernel() {
    // nvcc warned "Cannot do atomic on local memory" and emitted a trap:
    // no line (the trap is the compiler's), the kernel named.
    let report = rejudged("local_atomic");
    has(&report, "memcheck", "trap", None);
    let kernel = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "trap")
        .map(|s| s["kernel"].clone())
        .unwrap();
    assert_eq!(kernel, "local_atomic");
}
