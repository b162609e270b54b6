//! The real-workload corpus (tests/gpu/real/), judged from its H100 runs in
//! docs/examples/real/: correct programs built from library code pass with
//! every library finding still listed with its owner; each bug in the
//! user's part gates, at the user's file.

use crate::helpers::{cudawatch, json, root, run};

const CORRECT: &[&str] = &[
    "resnet_step",
    "gpt2_step",
    "compiled_mlp",
    "lightning_fit",
    "cupy_pipeline",
    "dataloader_amp_step",
    "pytest_model_ok",
    "vit_tiny_step",
    "ddp_step",
    "cudagraph_step",
    "hf_trainer",
];
/// Each bugged program, and the user's file its gating finding names.
const BUGGED: &[(&str, &str)] = &[
    ("triton_tail_in_model", "triton_tail_in_model.py"),
    ("extension_off_by_one", "cuda.cu"),
    ("embedding_bad_index", "embedding_bad_index.py"),
    ("empty_then_reduce", "empty_then_reduce.py"),
    ("user_kernel_race", "cuda.cu"),
    ("pytest_embedding", "test_lookup.py"),
    ("pytest_stream_race", "loader.py"),
    ("jax_pallas_accumulate", "jax_pallas_accumulate.py"),
];

fn judge(case: &str, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let path = root().join(format!("docs/examples/real/{case}.report.json"));
    let out = run(cudawatch()
        .arg("report")
        .arg(path)
        .args(["--format", "json"])
        .args(extra));
    (out.code, json(&out), out.stderr)
}

#[test]
fn correct_programs_pass_with_their_library_findings_listed_by_owner() {
    for case in CORRECT {
        let (code, report, stderr) = judge(case, &[]);
        assert_eq!(code, 0, "{case}: {stderr}");
        let findings = report["findings"].as_array().unwrap();
        assert!(
            !findings.is_empty(),
            "{case}: library findings are still reported"
        );
        for site in findings {
            assert_ne!(site["owner"]["owner"], "user", "{case}: {site}");
        }
        assert!(
            stderr.contains("not gating (--gate-scope all)"),
            "{case}: {stderr}"
        );
        // CLEAN, not "PASSED ... 1 warning or note site": no finding of
        // theirs is listed beside the library's; the allocator note stays.
        let verdict = &report["verdict"][0];
        assert_eq!(verdict["label"], "clean", "{case}: {verdict}");
        assert!(
            verdict["text"]
                .as_str()
                .unwrap()
                .starts_with("no errors found"),
            "{case}: {verdict}"
        );
        // Off under the sanitizers (a note), or on again for a program's
        // CUDA graphs (a warning): the report says which, wherever the
        // program used torch (a CuPy or JAX program has no such allocator,
        // which reports since the hook says what was imported leave out).
        let said = format!("{}{}", report["notes"], report["warnings"]);
        let torch = report["stages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| !s["reason"].to_string().contains("never imported torch"));
        assert!(
            !torch || said.contains("caching allocator"),
            "{case}: {report}"
        );
        // A flood's rerun keeps each launch's first records only, which
        // the run says (vit_tiny_step's and pytest_model_ok's initcheck on
        // ATen's reads of Hopper kernels' output), and a CUDA graph's rerun
        // with the caching allocator on sees no access inside its blocks
        // (cudagraph_step); nothing else warns.
        for warning in report["warnings"].as_array().into_iter().flatten() {
            let message = warning["message"].as_str().unwrap();
            assert!(
                message.contains("(a flood)") || message.contains("CUDA graphs failed"),
                "{case}: {warning}"
            );
        }
    }
    // Asked for, library internals gate too.
    let (code, _, _) = judge("gpt2_step", &["--gate-scope", "all"]);
    assert_eq!(code, 1, "the fmha race gates under --gate-scope all");
}

#[test]
fn bugs_in_the_users_part_gate_at_the_users_file() {
    for (case, file) in BUGGED {
        let (code, report, stderr) = judge(case, &[]);
        assert_eq!(code, 1, "{case}: {stderr}");
        let at_user = report["findings"].as_array().unwrap().iter().any(|s| {
            let located = s["location"]["file"]
                .as_str()
                .is_some_and(|f| f.ends_with(file));
            let launched = s["python_frame"]["file"]
                .as_str()
                .is_some_and(|f| f.ends_with(file));
            s["severity"] == "error" && (located || launched)
        });
        assert!(at_user, "{case}: no error finding at {file}");
        // The verdict line leads with the cause, at the user's file.
        let verdict = stderr.lines().find(|l| l.starts_with("FINDINGS:")).unwrap();
        assert!(verdict.contains(file), "{case}: {verdict}");
    }
}

#[test]
fn the_root_cause_leads_and_explains_the_plain_runs_crash() {
    let (_, report, stderr) = judge("embedding_bad_index", &[]);
    let verdict = stderr.lines().find(|l| l.starts_with("FINDINGS:")).unwrap();
    assert!(
        verdict.starts_with("FINDINGS: root cause: plain device_assert")
            && verdict.contains("launched from embedding_bad_index.py:11")
            && verdict.contains(
                "it explains the plain run's cudaErrorAssert at embedding_bad_index.py:11"
            ),
        "{verdict}"
    );
    // The 710s after the assert follow from it and are not counted as their own.
    assert!(verdict.contains("1 error site;"), "{verdict}");
    let followers = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s.get("consequence_of").is_some())
        .count();
    assert!(
        verdict.contains(&format!(
            "{followers} sites following from it folded under it"
        )),
        "{verdict}"
    );
    assert!(followers >= 4, "{verdict}");
}

#[test]
fn a_stage_stopped_by_the_bug_is_blocked_not_inconclusive() {
    // racecheck runs the program to the assert and no further: exit 1, not
    // 3; ncu, which could only profile up to it, is not run at all.
    let (code, report, stderr) = judge("embedding_bad_index", &[]);
    assert_eq!(code, 1, "{stderr}");
    let stage = |tool: &str| crate::run::stage(&report, tool).clone();
    assert_eq!(stage("racecheck")["outcome"], "inconclusive");
    assert!(
        stderr.contains(
            "racecheck, initcheck, synccheck, csan, memory could not finish because of them"
        ),
        "{stderr}"
    );
    assert_eq!(stage("ncu")["outcome"], "skipped");
    assert!(
        stage("ncu")["reason"]
            .as_str()
            .unwrap()
            .starts_with("blocked by the plain run's device assert"),
        "{}",
        stage("ncu")
    );
    assert!(!stderr.contains("INCONCLUSIVE"), "{stderr}");
}
