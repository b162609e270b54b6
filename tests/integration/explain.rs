//! `cudawatch explain`: numbers, names, pasted messages and tracebacks,
//! JSON, and docs/errors.md kept equal to what the binary says.

use std::io::Write;
use std::process::Stdio;

use crate::helpers::{cudawatch, finish, root, run};

#[test]
fn a_pasted_traceback_on_stdin_names_the_error_its_stickiness_and_the_next_command() {
    let mut child = cudawatch()
        .arg("explain")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"Traceback (most recent call last):\n  File \"train.py\", line 41, in <module>\n    loss.item()\n\
              RuntimeError: CUDA error: an illegal memory access was encountered\n\
              CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n\
              For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n",
        )
        .unwrap();
    let o = finish(child);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .starts_with("cudaErrorIllegalAddress = 700  (CUDA runtime)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("sticky:  yes"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("next:    cudawatch run --stages plain,memcheck -- PROGRAM"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("not where it happened"), "{}", o.stdout);
}

#[test]
fn json_answers_and_numbers_from_before_cuda_10_1() {
    let o = run(cudawatch().args(["explain", "--format", "json", "4"]));
    assert_eq!(o.code, 0);
    let answer: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(answer["read_as"], "number");
    assert_eq!(
        answer["explanations"][0]["name"],
        "cudaErrorCudartUnloading"
    );
    assert!(
        answer["notes"][0]
            .as_str()
            .unwrap()
            .contains("was cudaErrorLaunchFailure (now 719)"),
        "{answer}"
    );
    let o = run(cudawatch().args(["explain", "CUBLAS_STATUS_EXECUTION_FAILED"]));
    assert!(
        o.stdout.contains("= 13  (cuBLAS)")
            && o.stdout
                .contains("the function failed to launch on the GPU")
    );
    // Nothing matched: exit 1, and what to give instead.
    let o = run(cudawatch().args(["explain", "it", "broke"]));
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("nothing matched"), "{}", o.stderr);
}

#[test]
fn docs_errors_md_is_what_explain_all_prints() {
    let o = run(cudawatch().args(["explain", "--all"]));
    assert_eq!(o.code, 0);
    let committed = std::fs::read_to_string(root().join("docs/errors.md")).unwrap();
    assert!(
        committed == o.stdout,
        "docs/errors.md is stale: regenerate it with `cudawatch explain --all > docs/errors.md`"
    );
    // Every finding kind and the codes reports name have an anchor.
    for anchor in [
        "invalid_access",
        "cudaerrorillegaladdress",
        "cublas_status_execution_failed",
        "ncclsystemerror",
    ] {
        assert!(
            committed.contains(&format!("<a id=\"{anchor}\"></a>")),
            "{anchor}"
        );
    }
}

#[test]
fn the_help_and_the_docs_give_each_exit_code_the_meaning_the_code_gives_it() {
    // `--help` said a wrong cudawatch.toml exits 2; it exits 4, as
    // docs/exit-codes.md says.
    let help = crate::helpers::run(crate::helpers::cudawatch().arg("--help")).stdout;
    let docs = std::fs::read_to_string(crate::helpers::root().join("docs/exit-codes.md")).unwrap();
    let codes = std::fs::read_to_string(crate::helpers::root().join("src/exit_codes.rs")).unwrap();
    for (code, name) in [
        (0, "clean"),
        (1, "findings"),
        (2, "usage"),
        (3, "inconclusive"),
        (4, "setup error"),
        (5, "write error"),
        (130, "interrupted"),
    ] {
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(&format!("{code} "))
                    && l.contains(&format!("{name}:"))),
            "--help: {code} {name}\n{help}"
        );
        assert!(
            docs.contains(&format!("| {code} | {name} |")),
            "docs: {code} {name}"
        );
        assert!(
            codes.contains(&format!("= {code};")),
            "exit_codes.rs: {code}"
        );
    }
    let usage = help.lines().find(|l| l.contains("usage:")).unwrap();
    assert!(!usage.contains("cudawatch.toml"), "{usage}");
    let bad_file = crate::helpers::run(
        crate::helpers::cudawatch()
            .env("CUDAWATCH_CONFIG", "/nonexistent/cudawatch.toml")
            .args(["config"]),
    );
    assert_eq!(bad_file.code, 4, "{}", bad_file.stderr);
}

#[test]
fn a_name_a_few_letters_off_gets_a_did_you_mean() {
    for (typo, name) in [
        ("cudaErrorIllegalAdress", "cudaErrorIllegalAddress"),
        ("invalid_acess", "invalid_access"),
    ] {
        let out = crate::helpers::run(crate::helpers::cudawatch().args(["explain", typo]));
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("did you mean {name}? cudawatch explain {name}")),
            "{typo}: {}",
            out.stderr
        );
    }
    // Nothing near: no guess.
    let out = crate::helpers::run(crate::helpers::cudawatch().args(["explain", "zzzzzz"]));
    assert!(!out.stderr.contains("did you mean"), "{}", out.stderr);
}
