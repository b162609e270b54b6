//! `cudawatch parse` on real captures.

use crate::helpers::{cudawatch, json, run, sample, site_of_kind};

#[test]
fn memcheck_capture_folds_24_threads_into_one_site_with_its_allocation_distance() {
    let dir = sample("oob_write");
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(dir.join("memcheck.xml"))
        .arg(dir.join("memcheck.stdout")));
    assert_eq!(out.code, 1, "findings exit 1: {}", out.stderr);
    let report = json(&out);
    let sites = report["findings"].as_array().unwrap();
    let oob = site_of_kind(&report, "invalid_access");
    assert_eq!(oob["count"], 24);
    assert_eq!(oob["kernel"], "oob_write");
    assert_eq!(oob["location"]["line"], 6);
    let first = &oob["samples"][0];
    assert_eq!(first["thread"]["x"], 232);
    assert_eq!(first["nearest_allocation"]["relation"], "after");
    assert_eq!(first["nearest_allocation"]["distance"], 1);
    assert_eq!(first["nearest_allocation"]["size"], 4000);
    assert!(
        sites
            .iter()
            .any(|s| s["kind"] == "leak" && s["bytes"] == 4000)
    );
    assert!(out.stderr.contains("FINDINGS"), "{}", out.stderr);
}

#[test]
fn a_truncated_xml_keeps_its_complete_records_and_says_where_it_broke() {
    let tmp = tempfile::tempdir().unwrap();
    let full = std::fs::read(sample("uninit_read").join("initcheck.xml")).unwrap();
    let cut = tmp.path().join("initcheck.xml");
    std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
    let out = run(cudawatch().args(["parse", "--format", "json"]).arg(&cut));
    assert_eq!(out.code, 3, "a cut file is inconclusive: {}", out.stderr);
    let report = json(&out);
    let count = report["findings"][0]["count"].as_u64().unwrap();
    assert!(
        count > 200 && count < 512,
        "kept the complete half of 512 records, got {count}"
    );
    let warning = report["warnings"][0]["message"].as_str().unwrap();
    assert!(
        warning.contains("at byte") && warning.contains("complete records before it"),
        "{warning}"
    );
    assert!(
        report["warnings"][0]["source"]
            .as_str()
            .unwrap()
            .ends_with("initcheck.xml")
    );
}

#[test]
fn garbage_is_inconclusive_with_one_line_naming_the_file_and_position() {
    // Before: the verdict said CLEAN and an error line followed, exit 4.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("memcheck.xml");
    std::fs::write(&bad, "<<<>>> not xml at all").unwrap();
    let out = run(cudawatch().args(["parse"]).arg(&bad));
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(!out.stdout.contains("CLEAN"), "{}", out.stdout);
    let verdict = out
        .stdout
        .lines()
        .find(|l| l.starts_with("INCONCLUSIVE:"))
        .expect("a verdict line");
    assert!(verdict.contains("memcheck.xml"), "{verdict}");
    let reason = out
        .stdout
        .lines()
        .find(|l| l.contains("memcheck.xml: not compute-sanitizer XML"))
        .expect("the reason");
    assert!(reason.contains("at byte 4"), "{reason}");
}

#[test]
fn non_utf8_bytes_are_read_without_crashing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(sample("oob_write").join("memcheck.stdout")).unwrap();
    bytes.splice(100..100, [0xff, 0xfe, 0x80]);
    let file = tmp.path().join("memcheck.stdout");
    std::fs::write(&file, bytes).unwrap();
    let out = run(cudawatch().args(["parse", "--format", "json"]).arg(&file));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(!json(&out)["findings"].as_array().unwrap().is_empty());
}

#[test]
fn ncu_pages_give_sectors_per_request_and_the_wasteful_line() {
    let dir = sample("coalescing");
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(dir.join("ncu-raw.stdout"))
        .arg(dir.join("ncu-details.stdout"))
        .arg(dir.join("ncu-source-1.stdout"))
        .arg(dir.join("ncu.stdout")));
    let report = json(&out);
    let kernels = report["coalescing"].as_array().unwrap();
    let strided = kernels
        .iter()
        .find(|k| k["kernel"].as_str().unwrap().starts_with("gather_strided"))
        .unwrap();
    let sectors = strided["load"]["sectors"].as_f64().unwrap();
    let requests = strided["load"]["requests"].as_f64().unwrap();
    assert_eq!(sectors / requests, 32.0);
    assert_eq!(strided["excessive_sectors"], 3670016.0);
    let line = &report["wasteful_lines"][0];
    assert_eq!(line["location"]["line"], 12);
    assert!(line["source"].as_str().unwrap().contains("stride"));
    let site = site_of_kind(&report, "uncoalesced_access");
    assert!(
        site["message"]
            .as_str()
            .unwrap()
            .contains("3670016 excessive sectors (78%")
    );
    let human = run(cudawatch()
        .arg("parse")
        .arg(dir.join("ncu-raw.stdout"))
        .arg(dir.join("ncu-details.stdout"))
        .arg(dir.join("ncu-source-1.stdout"))
        .arg(dir.join("ncu.stdout")));
    assert!(
        human.stdout.contains("gather_strided"),
        "table names the kernel"
    );
    // Beside the JSON on stdout, stderr holds the verdict alone.
    assert!(!out.stderr.contains("gather_strided"), "{}", out.stderr);
    assert!(out.stderr.contains("FAILED:"), "{}", out.stderr);
}

#[test]
fn pytorch_device_assert_and_traceback_point_at_the_users_line() {
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(sample("torch_index_oob").join("plain.stderr")));
    let report = json(&out);
    let sites = report["findings"].as_array().unwrap();
    let assert_site = site_of_kind(&report, "device_assert");
    assert_eq!(assert_site["location"]["line"], 111);
    assert_eq!(assert_site["samples"][0]["thread"]["x"], 2);
    assert_eq!(assert_site["python_frame"]["line"], 10);
    assert!(sites.iter().any(|s| s["error"] == "cudaErrorAssert"));
}

#[test]
fn pytorch_out_of_memory_keeps_its_figures() {
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(sample("torch_oom").join("plain.stderr")));
    let report = json(&out);
    let oom = site_of_kind(&report, "out_of_memory");
    let message = oom["message"].as_str().unwrap();
    assert!(
        message.contains("tried to allocate 4096.00 GiB"),
        "{message}"
    );
    assert!(
        message.contains("capacity 79.18 GiB") && message.contains("free 76.45 GiB"),
        "{message}"
    );
    assert!(
        message.contains("allocated by PyTorch 1024.00 MiB"),
        "{message}"
    );
    assert_eq!(oom["python_frame"]["line"], 7);
}

#[test]
fn the_caching_allocator_trap_shows_in_the_captures() {
    let dir = sample("triton_hidden_oob");
    let cached = json(&run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(dir.join("memcheck-cached.xml"))));
    let uncached = json(&run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(dir.join("memcheck.xml"))));
    let oob = |r: &serde_json::Value| -> u64 {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["kind"] == "invalid_access")
            .map(|s| s["count"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(oob(&cached), 0, "cached allocator hides the overrun");
    assert!(oob(&uncached) >= 100, "uncached shows it");
    let site = site_of_kind(&uncached, "invalid_access");
    assert!(
        site["python_frame"]["file"]
            .as_str()
            .unwrap()
            .ends_with("triton_hidden_oob.py")
    );
}

/// The shapes users bring (issue: parse takes the files users really have).
mod shapes {
    use crate::helpers::{cudawatch, json, run, sample, site_of_kind};

    fn parse(files: &[&str]) -> crate::helpers::Output {
        let mut cmd = cudawatch();
        cmd.arg("parse").args(["--format", "json"]);
        for f in files {
            cmd.arg(sample("").join(f));
        }
        run(cmd)
    }

    #[test]
    fn live_ncu_csv_and_pages_without_base_units_give_the_real_figures() {
        // Before: the live output was an ncu log with 0 records and CLEAN;
        // the page without base units gave 0% wasted and 0.1 µs.
        for page in [
            "coalescing/ncu-live-raw.stdout",
            "coalescing/ncu-units-raw.stdout",
            "coalescing/ncu-sc-raw.stdout",
        ] {
            let out = parse(&[page]);
            assert_eq!(
                out.code, 1,
                "{page}: 78% wasted fails the 50% threshold: {}",
                out.stderr
            );
            let report = json(&out);
            let strided = report["coalescing"]
                .as_array()
                .unwrap()
                .iter()
                .find(|k| k["kernel"].as_str().unwrap().starts_with("gather_strided"))
                .unwrap()
                .clone();
            let ns = strided["duration_ns"].as_f64().unwrap();
            assert!(ns > 90_000.0 && ns < 120_000.0, "{page}: {ns} ns");
            assert!(
                report["inputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|i| i["kind"] == "ncu_raw"),
                "{page}: {}",
                report["inputs"]
            );
        }
    }

    #[test]
    fn a_file_that_held_nothing_to_check_is_never_clean() {
        // ncu's console lines alone; a sanitizer that never attached; one
        // that rejected its options (before: an unrecognised finding, or
        // CLEAN).
        for (file, says) in [
            ("coalescing/ncu.stdout", "console lines only"),
            (
                "no_cuda/memcheck.stdout",
                "terminated before first instrumented API call",
            ),
            (
                "oob_write/memcheck-duplicate-flag.stdout",
                "Usage: compute-sanitizer",
            ),
        ] {
            let out = parse(&[file]);
            assert_eq!(out.code, 3, "{file}: {}", out.stderr);
            let report = json(&out);
            assert!(
                report["findings"].as_array().unwrap().is_empty(),
                "{file}: no finding of the program"
            );
            assert!(
                report["warnings"].to_string().contains(says),
                "{file}: {}",
                report["warnings"]
            );
        }
    }

    #[test]
    fn a_print_limit_keeps_the_totals_and_the_leak_summary_becomes_a_leak() {
        // Before: the totals and the 4000-byte leak were lost.
        let out = parse(&["oob_write/memcheck-limit5.stdout"]);
        let report = json(&out);
        let summary = &report["inputs"][0]["summary"];
        assert_eq!(summary["errors"], 26);
        assert_eq!(summary["not_printed"], 21);
        let leak = site_of_kind(&report, "leak");
        assert_eq!(leak["bytes"], 4000);
        assert!(
            report["warnings"]
                .to_string()
                .contains("21 errors were not printed")
        );
    }

    #[test]
    fn a_ci_log_with_timestamps_and_test_output_is_read_and_tagged_by_test() {
        let out = parse(&["ci_log/pytest-github.stdout"]);
        assert_eq!(out.code, 1, "{}", out.stderr);
        let report = json(&out);
        let oob = site_of_kind(&report, "invalid_access");
        assert_eq!(oob["count"], 24);
        assert_eq!(oob["test"], "test_kernels.py::test_oob_write_is_clean");
        let leak = site_of_kind(&report, "leak");
        assert_eq!(leak["test"], "test_kernels.py::test_leak_is_clean");
        assert!(
            leak.get("consequence_of").is_none(),
            "another test's leak is its own finding"
        );
    }

    #[test]
    fn an_oom_and_each_leak_keep_their_figures_as_fields() {
        let oom = parse(&["torch_oom/plain.stderr"]);
        let report = json(&oom);
        let figures = &report["findings"][0]["memory"];
        assert_eq!(figures["tried"], 4096u64 << 30, "{figures}");
        assert_eq!(figures["allocated"], 1024u64 << 20);
        assert_eq!(figures["reserved_unallocated"], 0);
        assert!(figures["in_use_by_process"].as_u64().unwrap() > 1 << 30);
        assert!(figures["capacity"].as_u64().unwrap() > figures["free"].as_u64().unwrap());
        assert_eq!(figures["fragmentation_hint"], true);
        let leaks = parse(&["leak/memcheck.xml"]);
        let report = json(&leaks);
        let leak = site_of_kind(&report, "leak");
        let sizes: u64 = leak["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(sizes, leak["bytes"].as_u64().unwrap(), "{leak}");
    }

    #[test]
    fn explain_detection_says_what_each_file_was_taken_for() {
        let out = run(cudawatch()
            .args(["parse", "--explain-detection"])
            .arg(sample("coalescing").join("ncu.stdout"))
            .arg(sample("no_cuda").join("memcheck.stdout"))
            .arg(sample("oob_write").join("memcheck-limit5.stdout")));
        assert!(
            out.stderr.contains("What each file was taken for:"),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("NcuLog") && out.stderr.contains("console lines only"));
        assert!(
            out.stderr
                .contains("terminated before first instrumented API call")
        );
        assert!(
            out.stderr.contains("the tool counted 26 errors"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn an_ncu_page_with_a_launch_that_faulted_keeps_the_others_and_is_inconclusive() {
    // Captured on the H100: a PyTorch embedding whose index is past its
    // table. ncu measured the arange kernel, then the gather faulted.
    let page = sample("beyond/faulting_launch").join("stage-embedding_bad_index-raw.csv");
    let out = run(cudawatch().args(["parse", "--format", "json"]).arg(&page));
    assert_eq!(
        out.code, 3,
        "a launch not measured is not clean: {}",
        out.stderr
    );
    let report = json(&out);
    let launches = report["coalescing"].as_array().unwrap();
    assert_eq!(launches.len(), 2, "the measured launch is kept");
    assert_eq!(launches[0]["excessive_sectors"], 0.0);
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("ncu measured nothing of 1 of its 2 launches")
            && warnings.contains("vectorized_gather_kernel"),
        "{warnings}"
    );
    assert!(!warnings.contains("could not read"), "{warnings}");
    // ncu gives the faulted launch a grid and block of (0, 0, 0): shown as
    // unknown, not as a launch of no threads.
    let human = run(cudawatch().arg("parse").arg(&page)).stdout;
    let table = human
        .lines()
        .find(|l| l.contains("vectorized_gather"))
        .unwrap();
    assert!(
        !table.contains("0,0,0") && table.contains("│ -  "),
        "{table}"
    );
}

#[test]
fn pytorchs_out_of_memory_under_a_sanitizer_keeps_its_message() {
    // With the caching allocator off, PyTorch names the error only in its
    // "Search for `cudaErrorMemoryAllocation' in https://..." line.
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(sample("beyond/hog-800mib/memcheck.stderr")));
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let site = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["error"] == "cudaErrorMemoryAllocation")
        .unwrap()
        .clone();
    assert_eq!(
        site["message"], "cudaErrorMemoryAllocation: out of memory",
        "{site}"
    );
}
