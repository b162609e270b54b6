//! Right beyond the corpus (issue 21), on real H100 captures: a race
//! racecheck calls a warning still gates in the user's kernel, and no
//! verdict says "clean" while it lists findings.

use crate::helpers::{
    captured, checklist_item, cudawatch, read_json, root, run, sample, site_of_kind,
};
use crate::run::{fake_run, stage};

#[test]
fn a_warp_level_race_racecheck_calls_a_warning_gates_in_the_users_kernel() {
    // tests/gpu/warp_race.cu: shared memory read across lanes without
    // __syncwarp. racecheck: "Warning: Race reported between Write access at
    // warp_race.cu:10 and Read access at warp_race.cu:12". Before: CLEAN,
    // exit 0, while the race was listed, and "racecheck clean: pass".
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(fake_run("warp_race", &dir, "plain,racecheck", &[]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("gated as error: racecheck calls it warning"),
        "{}",
        out.stderr
    );
    let verdict = out
        .stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("FINDINGS"))
        .unwrap();
    assert!(verdict.contains("warp_race.cu:12"), "{verdict}");
    let report = read_json(&dir.join("report.json"));
    let racecheck = stage(&report, "racecheck");
    assert_eq!(
        racecheck["reason"], "1 hazard reported (0 errors, 1 warning)",
        "the stage says what the tool counted"
    );
    let judged = crate::helpers::judged(&dir);
    let race = crate::helpers::site_of_kind(&judged, "race");
    assert_eq!(race["severity"], "error");
    assert_eq!(race["tool_severity"], "warning");
    assert_eq!(checklist_item(&judged, "racecheck_clean")["status"], "fail");
}

#[test]
fn relaxed_to_racechecks_level_the_run_passes_but_is_never_called_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "warp_race",
        &tmp.path().join("run"),
        "plain,racecheck",
        &["--racecheck-warnings", "report"],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let verdict = out.stderr.lines().rev().find(|l| l.contains(": ")).unwrap();
    assert!(!out.stderr.contains("CLEAN"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("PASSED: no error sites; 1 warning or note site listed"),
        "{verdict}\n{}",
        out.stderr
    );
}

#[test]
fn every_human_format_says_when_cudawatch_raised_the_tools_level() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    run(fake_run("warp_race", &dir, "plain,racecheck", &[]));
    let html = tmp.path().join("r.html");
    let out = run(crate::helpers::cudawatch()
        .arg("report")
        .arg(&dir)
        .args(["--report", &format!("html={}", html.display())]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains("gated as error"), "{}", out.stdout);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("gated as error: racecheck calls it warning"),
        "HTML says it too"
    );
}

/// `cudawatch parse` of files in sample-reports/beyond/<case>/, as JSON.
/// `parse --format json` of the captures, and its JSON report; the
/// returned stderr ends with the human report of the same command (which
/// beside JSON on stdout prints only its verdict), for the tests that read
/// what a person sees.
fn parse_json(files: &[&str], extra: &[&str]) -> (crate::helpers::Output, serde_json::Value) {
    let command = |json: bool| {
        let mut cmd = crate::helpers::cudawatch();
        cmd.arg("parse").args(extra);
        if json {
            cmd.args(["--format", "json"]);
        }
        for f in files {
            cmd.arg(crate::helpers::sample(&format!("beyond/{f}")));
        }
        run(cmd)
    };
    let mut out = command(true);
    let report = crate::helpers::json(&out);
    out.stderr.push_str(&command(false).stdout);
    (out, report)
}

#[test]
fn an_error_inside_an_inlined_cuda_function_is_placed_at_the_users_line() {
    // tests/gpu/beyond/inlined_syncwarp.cu: synccheck places it "at
    // __syncwarp(unsigned int)+0xd0 in sm_30_intrinsics.hpp:110" with the
    // device frame "half_mask(int *)+0x30 in inlined_syncwarp.cu:11".
    // Before: location and kernel were the header's, owner "library", and
    // the run passed.
    for files in [
        &["inlined_syncwarp/synccheck.xml"][..],
        &["inlined_syncwarp/synccheck.stdout"][..],
    ] {
        let (out, report) = parse_json(files, &[]);
        assert_eq!(out.code, 1, "{files:?} gates: {}", out.stderr);
        let sites = report["findings"].as_array().unwrap();
        assert_eq!(sites.len(), 1, "{files:?}: one site: {sites:?}");
        let site = &sites[0];
        assert!(
            site["location"]["file"]
                .as_str()
                .unwrap()
                .ends_with("inlined_syncwarp.cu"),
            "{site}"
        );
        assert_eq!(site["location"]["line"], 11);
        assert_eq!(
            site["kernel"].as_str().unwrap().split('(').next(),
            Some("half_mask")
        );
        assert_eq!(site["owner"]["owner"], "user", "{site}");
        assert_eq!(
            site["inlined"]["func"].as_str().unwrap().split('(').next(),
            Some("__syncwarp")
        );
        assert_eq!(site["inlined"]["line"], 110);
    }
    let text = run(crate::helpers::cudawatch()
        .arg("parse")
        .arg(crate::helpers::sample(
            "beyond/inlined_syncwarp/synccheck.xml",
        )));
    let shown = format!("{}{}", text.stdout, text.stderr);
    assert!(
        shown.contains("inside __syncwarp (sm_30_intrinsics.hpp:110), inlined at this line"),
        "{shown}"
    );
}

#[test]
fn one_source_line_is_one_site_whatever_its_instructions() {
    // tests/gpu/beyond/unrolled_uninit.cu: 16 unrolled loads on line 9.
    // Before: 16 sites at the same file:line, one per instruction address.
    let (out, report) = parse_json(
        &[
            "unrolled_uninit/initcheck.xml",
            "unrolled_uninit/initcheck.stdout",
        ],
        &[],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let sites = report["findings"].as_array().unwrap();
    assert_eq!(sites.len(), 1, "{sites:?}");
    assert_eq!(sites[0]["location"]["line"], 9);
    assert_eq!(sites[0]["count"], 512, "every record of the line counted");
    assert_eq!(
        sites[0]["pcs"].as_array().unwrap().len(),
        16,
        "the instruction addresses stay inside the site"
    );
}

#[test]
fn a_record_cut_by_a_timeout_is_the_runs_incompleteness_never_a_finding() {
    // The real 66 MB text of initcheck on tests/gpu/real/resnet_step.py,
    // stopped by a 40 s timeout mid-record (its first line and last 400
    // lines are kept): the last record has a header and a half stack.
    let (out, report) = parse_json(&["resnet_step/initcheck-cut-tail.stdout"], &[]);
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains("last record was cut off"), "{warnings}");
    assert!(out.stderr.contains("INCONCLUSIVE"), "{}", out.stderr);
    // A real capture cut right after a record's header line (what the
    // issue saw: no kernel, no location, no frames) yields no finding.
    let tmp = tempfile::tempdir().unwrap();
    let whole = std::fs::read_to_string(crate::helpers::sample(
        "beyond/unrolled_uninit/initcheck.stdout",
    ))
    .unwrap();
    let cut: String = whole.lines().take(2).map(|l| format!("{l}\n")).collect();
    assert!(
        cut.contains("Uninitialized __global__ memory read"),
        "{cut}"
    );
    let path = tmp.path().join("initcheck.stdout");
    std::fs::write(&path, cut).unwrap();
    let out = run(crate::helpers::cudawatch()
        .args(["parse", "--format", "json"])
        .arg(&path));
    let report = crate::helpers::json(&out);
    assert_eq!(report["findings"].as_array().unwrap().len(), 0, "{report}");
    assert!(
        report["warnings"].to_string().contains("cut off"),
        "{report}"
    );
    assert_ne!(out.code, 0, "never clean: {}", out.stderr);
}

#[test]
fn a_returned_error_the_program_handled_is_a_warning_not_a_gate() {
    // tests/gpu/beyond/alloc_probe.cu halves a cudaMalloc request until it
    // fits, checks each failure and exits 0. Before: 2 gating API-error
    // sites (8 records), exit 1.
    let (out, report) = parse_json(
        &["alloc_probe/memcheck.xml", "alloc_probe/memcheck.stdout"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    for site in report["findings"].as_array().unwrap() {
        assert_eq!(site["kind"], "api_error");
        assert_eq!(site["severity"], "warning", "{site}");
        assert_eq!(site["tool_severity"], "error");
    }
    assert!(
        out.stderr
            .contains("the program checked this error and went on to finish normally"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("PASSED"), "{}", out.stderr);
    // The same in a run: plain exits 0, memcheck's end is consistent.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(fake_run(
        "beyond/alloc_probe",
        &tmp.path().join("run"),
        "plain,memcheck",
        &[],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("PASSED"), "{}", out.stderr);
    // The same kind of error in a program that did not survive it (the
    // planted api_error exits 1 at its check) still gates.
    let out = run(crate::helpers::cudawatch()
        .arg("parse")
        .arg(crate::helpers::sample("api_error")));
    assert_eq!(out.code, 1, "{}", out.stderr);
}

#[test]
fn a_program_whose_every_kernel_is_pytorchs_own_has_nothing_of_its_own_to_profile() {
    // tests/gpu/real/empty_then_reduce.py under ncu with the stage's
    // default filter of ATen's kernels (sample-reports/beyond/
    // ncu_framework_filter, H200): "No kernels were profiled", then the two
    // it saw, both `at::native`'s. Clean, and the reason says what was
    // left out; where ATen's coalescing can gate, nothing is left out.
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("case");
    std::fs::create_dir(&case).unwrap();
    std::fs::copy(
        sample("beyond/ncu_framework_filter/ncu-empty_then_reduce.stdout"),
        case.join("ncu.stdout"),
    )
    .unwrap();
    let checked = |name: &str, extra: &[&str]| {
        let dir = tmp.path().join(name);
        let out = run(
            fake_run("beyond/empty_then_reduce", &dir, "plain,ncu", extra).env("FAKE_CASE", &case),
        );
        let report = read_json(&dir.join("report.json"));
        (out, stage(&report, "ncu").clone(), dir)
    };
    let (out, ncu, dir) = checked("default", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(ncu["outcome"], "clean", "{ncu}");
    let reason = ncu["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "nothing of the program's own to profile: the 2 kernels ncu saw launched \
             (at::native::reduce_kernel, at::native::vectorized_elementwise_kernel) were all \
             left out; PyTorch's own kernels (ATen's, torchvision's) and NVIDIA's libraries' \
             (cuDNN's, cuBLAS's, CUTLASS's) not profiled, but for the libraries' Hopper and \
             Blackwell kernels"
        ),
        "{reason}"
    );
    assert!(
        ncu["command"]
            .to_string()
            .contains("\"--kernel-name-base\",\"mangled\""),
        "{ncu}"
    );
    let judged = crate::helpers::judged(&dir);
    let item = checklist_item(&judged, "coalescing_within_thresholds");
    assert_eq!(item["status"], "pass", "{item}");
    // What was not profiled is said in full once, where the stage table
    // cuts its cell.
    assert!(
        judged["notes"].to_string().contains(
            "ncu did not profile PyTorch's own kernels (ATen, torchvision) nor the libraries'"
        ),
        "{}",
        judged["notes"]
    );
    assert!(
        out.stderr
            .contains("ncu did not profile PyTorch's own kernels"),
        "{}",
        out.stderr
    );
    // ATen's coalescing gates under these: profiled, and a profile that
    // then holds none of the kernels ncu saw vouches for nothing.
    for flags in [&["--gate-scope", "all"][..], &["--fail-on", "warning"][..]] {
        let (out, ncu, _) = checked(flags[0], flags);
        assert!(!ncu["command"].to_string().contains("kernel-name"), "{ncu}");
        assert_eq!(out.code, 3, "{flags:?}: {}", out.stderr);
    }
    // The user's own filter is the user's: nothing matched it.
    let (out, ncu, _) = checked("user-filter", &["--ncu-kernel", "regex:gemm"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        ncu["reason"]
            .as_str()
            .unwrap()
            .contains("check --ncu-kernel"),
        "{ncu}"
    );
}

#[test]
fn a_program_that_launches_no_kernel_has_nothing_to_profile_and_is_not_inconclusive() {
    // tests/gpu/beyond/no_kernels.cu copies memory and launches nothing;
    // ncu attached ("==PROF== Connected to process") and profiled nothing,
    // listing no available kernels. Before: "ncu could not really check the
    // program", exit 3.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(fake_run(
        "beyond/no_kernels",
        &dir,
        "plain,memcheck,ncu",
        &[],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = read_json(&dir.join("report.json"));
    let ncu = stage(&report, "ncu");
    assert_eq!(ncu["outcome"], "clean", "{ncu}");
    assert!(
        ncu["reason"]
            .as_str()
            .unwrap()
            .starts_with("nothing to profile"),
        "{ncu}"
    );
    let judged = crate::helpers::judged(&dir);
    let item = checklist_item(&judged, "coalescing_within_thresholds");
    assert_eq!(item["status"], "pass", "{item}");
    // ncu that saw kernels it did not profile (a filter that matched
    // nothing lists them as "Available Kernels") stays inconclusive.
    let out =
        run(fake_run("coalescing", &tmp.path().join("run2"), "ncu", &[])
            .env("FAKE_MODE", "no-kernels"));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("gather_strided"), "{}", out.stderr);
}

#[test]
fn sectors_per_request_beyond_any_access_width_fail_without_sourcecounters() {
    // Live `ncu --csv --metrics <requests and sectors>` as a user types it
    // (the default details page): 32 sectors per request for the strided
    // gather. Before: no coalescing table at all, "CLEAN", exit 0.
    let (out, report) = parse_json(
        &["coalescing_ratio/ncu-live-ratio.stdout"],
        &["--max-excess-sectors-per-request", "4"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let strided = report["coalescing"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kernel"].as_str().unwrap().starts_with("gather_strided"))
        .expect("the strided launch is in the table");
    assert_eq!(strided["load"]["sectors_per_request"], 32.0);
    let item = checklist_item(&report, "coalescing_within_thresholds");
    assert_eq!(item["status"], "fail", "{item}");
    assert!(
        item["evidence"]
            .as_str()
            .unwrap()
            .contains("32.0 sectors per request")
    );
    // The raw page of the same metrics, under the default thresholds: 32
    // sectors per request wastes at least half, which is the limit (50%):
    // not certain to break it, so not checked, never passed.
    let (_, report) = parse_json(&["coalescing_ratio/ncu-live-ratio-raw.stdout"], &[]);
    let item = checklist_item(&report, "coalescing_within_thresholds");
    assert_eq!(item["status"], "inconclusive", "{item}");
}

#[test]
fn a_frameworks_pool_held_at_exit_is_not_the_users_leak() {
    // `compute-sanitizer --leak-check full` as a user types it (PyTorch's
    // caching allocator on) on tests/gpu/real/compiled_mlp.py: 17 "leaks"
    // of c10's caching allocator and cuBLAS's workspace, the innermost
    // Python frame Inductor's generated file in /tmp/torchinductor_root/.
    // Before: 2 user-owned leak sites, exit 1.
    let (out, report) = parse_json(
        &[
            "compiled_mlp/memcheck-leakcheck-user.xml",
            "compiled_mlp/memcheck-leakcheck-user.stdout",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let leaks: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "leak")
        .collect();
    assert!(!leaks.is_empty());
    for leak in leaks {
        assert_eq!(leak["owner"]["owner"], "framework", "{leak}");
        assert!(leak["owner"].get("user_call").is_none(), "{leak}");
        let python = leak["python_frame"]["file"].as_str().unwrap_or("");
        assert!(
            !python.contains("torchinductor"),
            "generated code is not the user's: {leak}"
        );
    }
    // CuPy's memory pool at exit, named by its extension module's package.
    let (out, report) = parse_json(
        &[
            "cupy_rawkernel_race/memcheck.xml",
            "cupy_rawkernel_race/memcheck.stdout",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(site_of_kind(&report, "leak")["owner"]["component"], "CuPy");
}

#[test]
fn a_kernel_compiled_at_run_time_is_placed_at_the_python_line_holding_its_source() {
    // tests/gpu/beyond/cupy_rawkernel_race.py: racecheck names
    // /tmp/tmpngomv22z/1c61d1....cubin.cu:9 (and :5 for the write). Run
    // from the program's directory (the source root), the race is at
    // cupy_rawkernel_race.py:14, the write at :10, with the source lines.
    let src = crate::helpers::root().join("tests/gpu/beyond");
    let out = run(crate::helpers::cudawatch()
        .current_dir(&src)
        .args(["parse", "--format", "json"])
        .arg(crate::helpers::sample(
            "beyond/cupy_rawkernel_race/racecheck.xml",
        )));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = crate::helpers::json(&out);
    let race = site_of_kind(&report, "race");
    assert!(
        race["location"]["file"]
            .as_str()
            .unwrap()
            .ends_with("cupy_rawkernel_race.py"),
        "{race}"
    );
    assert_eq!(race["location"]["line"], 14);
    assert_eq!(race["other"]["location"]["line"], 10);
    assert!(
        race["runtime_source"]["file"]
            .as_str()
            .unwrap()
            .ends_with(".cubin.cu")
    );
    assert!(
        race["message"]
            .as_str()
            .unwrap()
            .contains("cupy_rawkernel_race.py:10"),
        "{race}"
    );
    let snippet = race["snippet"]["lines"].to_string();
    assert!(snippet.contains("t += s[i]"), "{snippet}");
    assert_eq!(race["owner"]["owner"], "user");
}

#[test]
fn sanitizer_stages_stopped_by_a_finding_already_found_are_blocked_by_it() {
    // tests/gpu/device_assert.cu: racecheck, initcheck and synccheck end
    // with "Target application returned an error" and nothing found: the
    // assert stopped the program under them. Before: "clean" (or, in other
    // runs, "inconclusive: the program crashed under the tool").
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(fake_run(
        "device_assert",
        &dir,
        "plain,memcheck,racecheck,initcheck,synccheck",
        &[],
    ));
    assert_eq!(out.code, 1, "exits with the finding, not 3: {}", out.stderr);
    // Blocked is a judgement (it follows the gate): the judged report says it.
    let report = crate::helpers::judged(&dir);
    for tool in ["racecheck", "initcheck", "synccheck"] {
        let s = stage(&report, tool);
        assert_ne!(s["outcome"], "clean", "{s}");
        assert!(
            s["blocked_by"]
                .as_str()
                .is_some_and(|b| b.contains("device_assert.cu:7")),
            "{s}"
        );
    }
    assert!(out.stderr.contains("│ blocked "), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("racecheck, initcheck, synccheck could not finish because of them"),
        "{}",
        out.stderr
    );
}

#[test]
fn independent_bugs_are_all_found_in_one_run_by_kernel_level_recovery() {
    // tests/gpu/beyond/two_bugs.cu: scale() writes past a pitched matrix,
    // the later sample() reads past a vector. memcheck's default stops at
    // the first (160 records, all scale's); with --destroy-on-device-error
    // kernel (cudawatch's default) both are found. Before: one bug a run.
    let kernels = |extra: &[&str]| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let out = run(fake_run("beyond/two_bugs", &dir, "plain,memcheck", extra));
        assert_eq!(out.code, 1, "{}", out.stderr);
        let report = read_json(&dir.join("report.json"));
        let command = stage(&report, "memcheck")["command"].to_string();
        let mut found: Vec<String> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["kind"] == "invalid_access")
            .map(|s| {
                s["kernel"]
                    .as_str()
                    .unwrap()
                    .split('(')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        found.sort();
        (found, command)
    };
    let (found, command) = kernels(&[]);
    assert_eq!(found, ["sample", "scale"]);
    assert!(
        command.contains("\"--destroy-on-device-error\",\"kernel\""),
        "{command}"
    );
    let (found, command) = kernels(&["--sanitizer-recovery", "context"]);
    assert_eq!(
        found,
        ["scale"],
        "the tool's default sees the first bug only"
    );
    assert!(!command.contains("--destroy-on-device-error"), "{command}");
}

#[test]
fn a_sanitizer_that_ran_out_of_gpu_memory_is_a_tool_failure_naming_who_held_it() {
    // Before: synccheck's "Internal Sanitizer Error ... Unable to allocate
    // enough memory" (15 records, one per untracked launch) was a
    // user-owned error finding ×15, the verdict's first line, and 15
    // identical warnings. Captured on the H100 with another process
    // holding all but 128 MiB (sample-reports/beyond/crowded).
    let (out, report) = parse_json(
        &["crowded/synccheck-128.xml", "crowded/synccheck-128.stdout"],
        &[],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(report["findings"].as_array().unwrap().len(), 0, "{report}");
    let warnings = report["warnings"].as_array().unwrap();
    assert_eq!(
        warnings
            .iter()
            .filter(|w| w["message"]
                .as_str()
                .unwrap()
                .contains("Internal Sanitizer Error"))
            .count(),
        1,
        "said once: {warnings:?}"
    );

    // In a run: the stage is inconclusive with the tool's cause, the
    // launches it did not track, and the process that held the memory.
    let tmp = tempfile::tempdir().unwrap();
    let case = crate::helpers::sample("beyond/crowded");
    let marker = "cudawatch-test-other-job-holds-the-gpu";
    let mut holder = std::process::Command::new("bash")
        .args(["-c", &format!("exec -a {marker} sleep 30")])
        .spawn()
        .unwrap();
    let path = format!(
        "{}:{}",
        crate::helpers::root().join("tests/fakes").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = run(crate::helpers::cudawatch()
        .env("PATH", path)
        .env("FAKE_CASE", &case)
        .env("FAKE_RUN", "synccheck-128")
        .env("FAKE_SLEEP", "2")
        .env("FAKE_SMI_FREE", "0, GPU-b0fb79d7, 128")
        .env("FAKE_SMI_HOLD", format!("{marker}=79464"))
        .arg("run")
        .args(["--out-dir", tmp.path().join("r").to_str().unwrap()])
        .args(["--stages", "plain,synccheck", "--compute-sanitizer"])
        .arg(crate::helpers::root().join("tests/fakes/compute-sanitizer"))
        .args(["--", "sh", "-c"])
        .arg(format!("cat '{}/plain-128.stdout'", case.display())));
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(out.code, 3, "{}", out.stderr);
    let report = read_json(&tmp.path().join("r/report.json"));
    assert_eq!(report["findings"].as_array().unwrap().len(), 0, "{report}");
    let synccheck = crate::run::stage(&report, "synccheck");
    assert_eq!(synccheck["outcome"], "inconclusive");
    let reason = synccheck["reason"].as_str().unwrap();
    for part in [
        "synccheck ran out of GPU memory for its own bookkeeping",
        "did not track 15 launches of nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
        "other processes held the GPU's memory: pid",
        "79464 MiB",
    ] {
        assert!(reason.contains(part), "{part}: {reason}");
    }
    // Named by its executable, as `ps` shows it, never by its command
    // line: another user's arguments may hold a secret.
    assert!(
        reason.contains("(sleep)") && !reason.contains(marker),
        "the holder named by its executable alone: {reason}"
    );
}

#[test]
fn ncus_call_stacks_give_each_launch_the_line_that_launched_it() {
    // ncu's call stacks are only in the text of its details page; with it
    // beside the raw page, each coalescing row and each ncu site has the
    // user's line (issue 21, class 6). Real captures: PyTorch's sort and
    // attention kernels, and a C++ program built with -g.
    let (out, report) = parse_json(
        &[
            "library_kernels/ncu-stack-raw-lean.stdout",
            "library_kernels/ncu-stack-text.stdout",
        ],
        &[],
    );
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let rows = report["coalescing"].as_array().unwrap();
    let sort = rows
        .iter()
        .find(|r| {
            r["kernel"]
                .as_str()
                .unwrap()
                .contains("DeviceRadixSortOnesweepKernel")
        })
        .unwrap();
    assert_eq!(sort["launched_from"]["func"], "sort_step");
    assert_eq!(sort["launched_from"]["line"], 10);
    let site = crate::helpers::site_with_kernel(&report, "DeviceRadixSortOnesweepKernel");
    assert_eq!(site["python_frame"]["line"], 10, "{site}");
    assert_eq!(site["owner"]["owner"], "library", "{site}");
    // A kernel launched by the autograd engine's own thread has no Python
    // frame and no source line: none is made up.
    let backward = rows
        .iter()
        .find(|r| r["kernel"].as_str().unwrap().contains("compute_dot_do_o"))
        .unwrap();
    assert!(backward.get("launched_from").is_none(), "{backward}");

    let (_, report) = parse_json(
        &[
            "coalescing_stack/ncu-stack-raw-lean.stdout",
            "coalescing_stack/ncu-stack-text.stdout",
        ],
        &[],
    );
    for row in report["coalescing"].as_array().unwrap() {
        // main's launch line (coalescing.cu:22 and :24), not the kernel's
        // host stub at its definition.
        let kernel = row["kernel"].as_str().unwrap();
        let line = if kernel.starts_with("gather_coalesced") {
            22
        } else {
            24
        };
        assert_eq!(row["launched_from"]["func"], "main", "{row}");
        assert_eq!(row["launched_from"]["line"], line, "{row}");
    }
}

#[test]
fn the_ncu_stage_records_call_stacks_and_reads_them_into_its_report() {
    // The stage profiles with --call-stack (native and Python) and imports
    // the details page as text beside the CSV pages; the fake ncu replays
    // the H100 captures of the library-kernel program made that way.
    let tmp = tempfile::tempdir().unwrap();
    let captured = crate::helpers::sample("beyond/library_kernels");
    let case = tmp.path().join("case");
    std::fs::create_dir(&case).unwrap();
    for (from, to) in [
        ("ncu-stack-lean.stdout", "ncu.stdout"),
        ("ncu-stack-raw-lean.stdout", "ncu-raw.stdout"),
        ("ncu-stack-text.stdout", "ncu-stack-text.stdout"),
    ] {
        std::fs::copy(captured.join(from), case.join(to)).unwrap();
    }
    // The program of the run: a plain run that prints nothing and exits 0.
    std::fs::write(case.join("ncu-details.stdout"), "").unwrap();
    std::fs::write(case.join("plain.stdout"), "").unwrap();
    std::fs::write(case.join("plain.stderr"), "").unwrap();
    std::fs::write(case.join("plain.exit"), "0\n").unwrap();
    let out_dir = tmp.path().join("r");
    let mut cmd = fake_run("clean", &out_dir, "plain,ncu", &[]);
    cmd.env("FAKE_CASE", &case);
    let out = run(cmd);
    // The capture has no source pages to replay: that stage is not clean
    // (exit 3); what is asserted here is the stacks.
    assert!([0, 1, 3].contains(&out.code), "{}", out.stderr);
    let report = read_json(&out_dir.join("report.json"));
    let ncu = stage(&report, "ncu");
    let command = ncu["command"].to_string();
    assert!(
        command.contains("--call-stack") && command.contains("\"native\""),
        "{command}"
    );
    // ncu said it profiled 14 launches: the stacks' text import is one
    // piece of them (launches 0 to 13), read back like the whole page.
    assert!(
        ncu["artifacts"].to_string().contains("ncu/stacks-0.txt"),
        "{ncu}"
    );
    assert!(
        report["inputs"].to_string().contains("ncu/stacks-*.txt"),
        "{}",
        report["inputs"]
    );
    let sort = report["coalescing"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["kernel"]
                .as_str()
                .unwrap()
                .contains("DeviceRadixSortOnesweepKernel")
        })
        .unwrap()
        .clone();
    assert_eq!(sort["launched_from"]["func"], "sort_step", "{sort}");
}

#[test]
fn an_uninitialised_tensor_read_by_aten_gates_though_initcheck_kept_no_host_stack() {
    // The real bug program `torch.empty`, half filled, summed, under
    // initcheck as the stage runs it (`--show-backtrace device`, H100):
    // the read is in ATen's reduce_kernel and no Python frame says who
    // launched it. Before: "inside the framework, not gating", CLEAN.
    let (out, report) = parse_json(
        &[
            "empty_then_reduce/initcheck-device.xml",
            "empty_then_reduce/initcheck-device.stdout",
        ],
        &[],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let site = site_of_kind(&report, "uninitialized_read");
    assert_eq!(site["owner"]["owner"], "framework", "{site}");
    assert_eq!(site["owner"]["user_call"], true, "{site}");
}

#[test]
fn a_read_of_what_cublas_hopper_kernel_wrote_is_doubted_not_gated() {
    // tests/gpu/beyond/gemm_output_read.py bf16 on the H100: a bf16 matrix
    // product (cuBLAS's nvjet_sm90_*) and the user's `y + 1` on its
    // output. initcheck reports all 2048 reads of the product as
    // uninitialised: it does not see the Hopper kernel's stores. Before:
    // the user's call, gating; every bf16 model on a Hopper GPU failed.
    let bf16 = [
        "gemm_bf16/initcheck-device.xml",
        "gemm_bf16/initcheck-device.stdout",
        "gemm_bf16/ncu-raw.stdout",
        "gemm_bf16/ncu-details.stdout",
    ];
    let (out, report) = parse_json(&bf16, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let site = site_of_kind(&report, "uninitialized_read");
    assert_eq!(site["count"], 2048, "{site}");
    assert!(site["owner"]["user_call"].is_null(), "{site}");
    let doubt = site["doubt"].as_str().unwrap();
    assert!(
        doubt.contains("nvjet_sm90_tst_64x8_64x16_2x4_h_bz_NNT"),
        "names the unseen writer: {doubt}"
    );
    // The terminal says it where the site is folded.
    let terminal = {
        let mut cmd = crate::helpers::cudawatch();
        cmd.args(["--color", "never", "parse"]);
        for f in bf16 {
            cmd.arg(crate::helpers::sample(&format!("beyond/{f}")));
        }
        run(cmd)
    };
    assert!(
        terminal
            .stdout
            .contains("doubt (1 site): initcheck does not see"),
        "{}",
        terminal.stdout
    );
    // Without ncu's kernels nothing shows the writer was a Hopper kernel:
    // the read is the user's call, as empty_then_reduce's is.
    let (alone, report) = parse_json(&bf16[..2], &[]);
    assert_eq!(alone.code, 1, "{}", alone.stderr);
    assert!(site_of_kind(&report, "uninitialized_read")["doubt"].is_null());
    // The fp32 product (cuBLAS's sm80_xmma kernel) is seen written: no
    // record at all, so nothing to doubt.
    let (fp32, report) = parse_json(
        &["gemm_fp32/initcheck-device.xml", "gemm_fp32/ncu-raw.stdout"],
        &[],
    );
    assert_eq!(fp32.code, 0, "{}", fp32.stderr);
    assert!(report["findings"].as_array().unwrap().is_empty());
}

#[test]
fn a_run_of_a_bf16_product_passes_and_its_checklist_says_what_initcheck_could_not_see() {
    // The same capture replayed as a run: initcheck as the stage runs it,
    // ncu's pages of the same program (which name nvjet_sm90_*).
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut cmd = fake_run("beyond/gemm_bf16", &dir, "plain,initcheck,ncu", &[]);
    cmd.env("FAKE_RUN", "initcheck-device");
    let out = run(cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let judged = crate::helpers::judged(&dir);
    let item = checklist_item(&judged, "initcheck_clean");
    assert_eq!(item["status"], "pass", "{item}");
    assert!(
        item["evidence"]
            .as_str()
            .unwrap()
            .contains("1 uninitialised-read site may be reads of what nvjet_sm90"),
        "{item}"
    );
}

#[test]
fn the_users_own_kernel_reading_a_hopper_product_is_a_warning_with_the_doubt() {
    // gemm_output_read.py triton: the bf16 product, then the user's Triton
    // kernel `add_one` reads it (gemm_output_read.py:22). initcheck reports
    // all 2048 reads. The read is the user's kernel's, so it is listed at
    // the user's line; it may be initcheck's blind spot, so it is a warning
    // that `--fail-on warning` gates, not an error.
    let files = [
        "gemm_triton/initcheck-device.xml",
        "gemm_triton/initcheck-device.stdout",
        "gemm_triton/ncu-raw.stdout",
        "gemm_triton/ncu-details.stdout",
    ];
    let (out, report) = parse_json(&files, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let site = site_of_kind(&report, "uninitialized_read");
    assert_eq!(site["owner"]["owner"], "user", "{site}");
    assert_eq!(site["kernel"], "add_one", "{site}");
    assert_eq!(site["location"]["line"], 22, "{site}");
    assert_eq!(site["severity"], "warning", "{site}");
    assert_eq!(site["tool_severity"], "error", "{site}");
    assert!(
        site["doubt"].as_str().unwrap().contains("nvjet_sm90"),
        "{site}"
    );
    let (strict, _) = parse_json(&files, &["--fail-on", "warning"]);
    assert_eq!(strict.code, 1, "{}", strict.stderr);
    // The code-scanning alert says the doubt too.
    let tmp = tempfile::tempdir().unwrap();
    let sarif_path = tmp.path().join("r.sarif");
    let mut cmd = crate::helpers::cudawatch();
    cmd.arg("parse")
        .arg("--report")
        .arg(format!("sarif={}", sarif_path.display()));
    for f in files {
        cmd.arg(crate::helpers::sample(&format!("beyond/{f}")));
    }
    run(cmd);
    let sarif = read_json(&sarif_path);
    let alert = &sarif["runs"][0]["results"][0];
    assert_eq!(alert["level"], "warning", "{alert}");
    assert!(
        alert["message"]["text"]
            .as_str()
            .unwrap()
            .contains("; doubt: initcheck does not see"),
        "{alert}"
    );
}

/// The initcheck invocations a fake run logged (`FAKE_LOG`).
fn initcheck_runs(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("compute-sanitizer tool=initcheck"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_framework_read_without_host_stacks_gets_its_launching_line_from_a_rerun_with_them() {
    // tests/gpu/real/empty_then_reduce.py: a `torch.empty` buffer half
    // filled, then `buf.sum()` at line 9. The initcheck stage runs without
    // host stacks (for speed), so ATen's reduce_kernel read had no line to
    // fix; a second run with host stacks for its first records gives it.
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out = run(fake_run(
        "beyond/empty_then_reduce",
        &tmp.path().join("run"),
        "plain,initcheck",
        &["--format", "json"],
    )
    .env("FAKE_LOG", &log));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let site = site_of_kind(&report, "uninitialized_read");
    assert_eq!(site["kernel"], "reduce_kernel", "{site}");
    assert_eq!(site["python_frame"]["line"], 9, "{site}");
    assert!(
        site["python_frame"]["file"]
            .as_str()
            .unwrap()
            .ends_with("empty_then_reduce.py"),
        "{site}"
    );
    // The count is the stage's own run's: 128 reads.
    assert_eq!(site["count"], 128, "{site}");
    assert!(
        stage(&report, "initcheck")["reason"]
            .as_str()
            .unwrap()
            .contains("the launching line of 1 site from a second run with host call stacks"),
        "{report}"
    );
    assert!(
        report["verdict"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&format!(
                "reduce_kernel (launched from {})",
                captured("tests/gpu/real/empty_then_reduce.py:9")
            )),
        "{report}"
    );
    let runs = initcheck_runs(&log);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs[0].contains("backtrace=device") && runs[1].contains("backtrace=yes"));
    assert!(tmp.path().join("run/initcheck/host-stacks.xml").is_file());
}

/// `cudawatch run --stages plain,initcheck --format json` of a Python
/// program that prints `output`, the fake replaying `case` and logging to
/// `tmp`'s fake.log, the run in `tmp`'s run/.
fn python_initcheck(
    case: &std::path::Path,
    tmp: &std::path::Path,
    output: &str,
) -> crate::helpers::Output {
    run(cudawatch()
        .env("FAKE_CASE", case)
        .env("FAKE_LOG", tmp.join("fake.log"))
        .args(["run", "--stages", "plain,initcheck", "--format", "json"])
        .args(["--grace", "0.5", "--out-dir"])
        .arg(tmp.join("run"))
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .args(["--", "python3", "-c", &format!("print('{output}')")]))
}

#[test]
fn a_python_programs_initcheck_keeps_no_stack_and_still_names_the_launching_line() {
    // The same program as a Python program's stage now runs it: initcheck
    // without any stack (its reads are nearly all library and framework
    // ones, which flooded every such stage into a second try), then the
    // rerun with host stacks for ATen's read (H200, 2026-11-28:
    // initcheck-none.*, and stackless.report.json, where the same run on
    // the GPU named empty_then_reduce.py:9).
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out = python_initcheck(
        &sample("beyond/empty_then_reduce"),
        tmp.path(),
        "total 512.0",
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let site = site_of_kind(&report, "uninitialized_read");
    assert_eq!(site["kernel"], "reduce_kernel", "{site}");
    assert_eq!(site["python_frame"]["line"], 9, "{site}");
    assert_eq!(site["count"], 128, "{site}");
    let runs = initcheck_runs(&log);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(
        runs[0].contains("backtrace=no") && runs[1].contains("backtrace=yes"),
        "{runs:?}"
    );
    // One try, no flood: nothing was stopped or run again for it.
    assert!(!tmp.path().join("run/flooded").exists());
    // What the GPU said of the same run.
    let gpu =
        std::fs::read_to_string(sample("beyond/empty_then_reduce/stackless.report.json")).unwrap();
    let gpu: serde_json::Value = serde_json::from_str(&gpu).unwrap();
    let initcheck = stage(&gpu, "initcheck");
    assert!(
        initcheck["command"]
            .to_string()
            .contains(r#""--show-backtrace","no""#)
    );
    assert_eq!(
        site_of_kind(&gpu, "uninitialized_read")["python_frame"]["line"],
        9
    );
}

#[test]
fn a_flood_without_stacks_is_not_run_again_with_them() {
    // ViT-tiny's stackless initcheck on the H100: 33 million reads of what
    // Hopper's GEMMs wrote, 46,336 kept. Its ATen sites have no launching
    // line, but a run with host stacks would take as long as the flood
    // did: a Python program's stage keeps them without one.
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("case");
    std::fs::create_dir_all(&case).unwrap();
    let vit = sample("beyond/vit_tiny_step");
    let unpacked = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(vit.join("initcheck-flood.xml.gz"))
        .output()
        .expect("gzip");
    std::fs::write(case.join("initcheck-none.xml"), unpacked.stdout).unwrap();
    for (from, to) in [
        ("initcheck-flood-tail.stdout", "initcheck-none.stdout"),
        ("initcheck-flood.stderr", "initcheck-none.stderr"),
        ("initcheck-flood.exit", "initcheck-none.exit"),
    ] {
        std::fs::copy(vit.join(from), case.join(to)).unwrap();
    }
    let log = tmp.path().join("fake.log");
    let out = python_initcheck(&case, tmp.path(), "loss");
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    // ATen's sites, without a launching line, and the tool's total.
    let site = site_of_kind(&report, "uninitialized_read");
    assert!(
        site["python_frame"].is_null() && site["launch_frame"].is_null(),
        "{site}"
    );
    let reason = stage(&report, "initcheck")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("33462336 skipped"), "{reason}");
    let runs = initcheck_runs(&log);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].contains("backtrace=no"), "{runs:?}");
    assert!(!tmp.path().join("run/initcheck/host-stacks.xml").exists());
}

#[test]
fn a_read_in_the_users_kernel_at_its_own_line_is_not_run_again() {
    // A user kernel built with -lineinfo is placed at its line by its
    // device frames: nothing to gain from host stacks, so no second run.
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let out = run(fake_run(
        "beyond/unrolled_uninit",
        &tmp.path().join("run"),
        "plain,initcheck",
        &["--format", "json"],
    )
    .env("FAKE_LOG", &log)
    .env("FAKE_RUN", "initcheck-device"));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let site = site_of_kind(&report, "uninitialized_read");
    assert_eq!(site["owner"]["owner"], "user", "{site}");
    assert!(site["location"]["line"].is_number(), "{site}");
    assert_eq!(initcheck_runs(&log).len(), 1);
    assert!(!tmp.path().join("run/initcheck/host-stacks.xml").exists());
}

#[test]
fn a_race_in_a_users_extension_kernel_names_the_python_line_ncu_saw_launch_it() {
    // tests/gpu/real/user_kernel_race.py on the H100: racecheck's analysis
    // record has no host stack, so the race came out at cuda.cu:11 with no
    // word of the model code. ncu profiled block_sum launched from line 31.
    let tmp = tempfile::tempdir().unwrap();
    let with_ncu = tmp.path().join("with-ncu");
    let out = run(fake_run(
        "beyond/race_extension",
        &with_ncu,
        "plain,racecheck,ncu",
        &[],
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        // The path as captured, or relative where the checkout is there.
        out.stderr.contains("python: main in ")
            && out.stderr.contains(
                "tests/gpu/real/user_kernel_race.py:31 (where ncu saw this kernel launched)"
            ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "racecheck race at cuda.cu:11 (launched from {})",
            captured("tests/gpu/real/user_kernel_race.py:31")
        )),
        "{}",
        out.stderr
    );
    let report = read_json(&with_ncu.join("report.json"));
    let race = site_of_kind(&report, "race");
    assert_eq!(race["python_frame"]["line"], 31);
    assert_eq!(race["launch_seen_by"], "ncu");
    // Without the ncu stage the race has no launching line, and none is
    // made up.
    let alone = tmp.path().join("alone");
    let out = run(fake_run(
        "beyond/race_extension",
        &alone,
        "plain,racecheck",
        &[],
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let race = site_of_kind(&read_json(&alone.join("report.json")), "race").clone();
    assert!(race.get("python_frame").is_none(), "{race}");
    assert!(!out.stderr.contains("where ncu saw"), "{}", out.stderr);
    // A C++ program built without host line tables: ncu's native stack has
    // no line, so nothing is borrowed.
    let cpp = tmp.path().join("cpp");
    let out = run(fake_run(
        "beyond/race_smem",
        &cpp,
        "plain,racecheck,ncu",
        &[],
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(!out.stderr.contains("where ncu saw"), "{}", out.stderr);
}

#[test]
fn aten_kernels_in_anonymous_namespaces_are_atens_not_the_users() {
    // Hugging Face's Trainer on the H100 (sample-reports/beyond/hf_trainer/):
    // initcheck's XML names ATen's dropout `fused_dropout_kernel_vec`, its
    // text `at::native::<unnamed>::fused_dropout_kernel_vec<...>`. Cut at
    // `<unnamed>`, the signature was lost and the read was listed as the
    // user's kernel (the run PASSED with a user site, not CLEAN).
    let (out, report) = parse_json(
        &[
            "hf_trainer/initcheck-first-per-kernel.xml",
            "hf_trainer/initcheck-first-per-kernel.stdout",
        ],
        &[],
    );
    // Cut to a record per kernel, the log holds fewer records than its
    // ERROR SUMMARY counts: inconclusive, and said.
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("ERROR SUMMARY says 131584 errors but the XML holds 5 records")
    );
    let dropout = crate::helpers::site_with_kernel(&report, "fused_dropout_kernel_vec");
    assert!(
        dropout["kernel_signature"]
            .as_str()
            .is_some_and(|s| s.contains("at::native::<unnamed>::fused_dropout_kernel_vec<")),
        "{dropout}"
    );
    assert_eq!(dropout["owner"]["component"], "PyTorch ATen", "{dropout}");
    // ncu names some of ATen's kernels without `at::`; re-judged, the
    // Trainer's run from before lists no site as the user's.
    let out = run(crate::helpers::cudawatch()
        .args(["report", "--format", "json"])
        .arg(crate::helpers::sample(
            "beyond/hf_trainer/before/cudawatch.report.json",
        )));
    let judged = crate::helpers::json(&out);
    let embedding = crate::helpers::site_with_kernel(
        &judged,
        "void native::<unnamed>::embedding_backward_feature_kernel",
    );
    assert_eq!(embedding["owner"]["owner"], "framework", "{embedding}");
    assert!(!embedding["owner"]["user_call"].as_bool().unwrap_or(false));
}

#[test]
fn a_stopped_ncu_still_names_the_hopper_kernel_whose_output_initcheck_doubts() {
    // gemm_output_read.py bf16 on the H100: initcheck's 2048 reads of
    // cuBLAS's nvjet output, and ncu's console naming each kernel as it
    // profiled it. Here ncu is stopped at its limit after those lines,
    // before any page: its console still shows an nvjet kernel ran, so the
    // reads are doubted, not the user's error. Before, only ncu's pages
    // named the writer, and a correct bf16 ViT on an H200 whose ncu was
    // stopped early gated on 7 such ATen sites.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(fake_run(
        "beyond/gemm_bf16",
        &dir,
        "plain,initcheck,ncu",
        &["--timeout", "3"],
    )
    .env("FAKE_NCU_STOP", "1"));
    let report = crate::helpers::judged(&dir);
    assert_eq!(
        stage(&report, "ncu")["outcome"],
        "inconclusive",
        "{}",
        out.stderr
    );
    let site = site_of_kind(&report, "uninitialized_read");
    let doubt = site["doubt"].as_str().unwrap_or_else(|| panic!("{site}"));
    assert!(doubt.contains("nvjet_sm90_tst_64x8_64x16_2x4"), "{doubt}");
    assert_eq!(site["severity"], "warning", "{site}");
    // Inconclusive for the stopped ncu, never FINDINGS for the doubted reads.
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(!out.stderr.contains("with findings"), "{}", out.stderr);
}
