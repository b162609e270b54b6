//! JAX programs: the XLA settings every stage of a Python program gets
//! (`src/tools/xla.rs`), the note a JAX program's report carries, and the
//! real run of a JAX training step read back.

use std::path::Path;

use crate::helpers::{captured, cudawatch, json, read_json, root, run, sample};
use crate::run::stage;

/// `cudawatch run` of `program` (Python, run for real in the stages that
/// run it: plain, csan) with the fake compute-sanitizer replaying the clean
/// capture, the fake JAX importable.
fn run_python(tmp: &Path, program: &str, user_flags: Option<&str>) -> serde_json::Value {
    std::fs::write(tmp.join("prog.py"), program).unwrap();
    let mut cmd = cudawatch();
    cmd.current_dir(tmp)
        .env("FAKE_CASE", sample("clean"))
        .env(
            "PYTHONPATH",
            format!(
                "{}:{}",
                root().join("tests/fakes/jax").display(),
                root().join("tests/fakes/pytorch").display()
            ),
        )
        .env_remove("XLA_FLAGS")
        .env_remove("XLA_PYTHON_CLIENT_PREALLOCATE")
        .args(["run", "--format", "json", "--grace", "0.5"])
        .args(["--stages", "plain,memcheck,csan"])
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .args(["--out-dir", tmp.join("run").to_str().unwrap()])
        .args(["--", "python3", "prog.py"]);
    if let Some(flags) = user_flags {
        cmd.env("XLA_FLAGS", flags);
    }
    let out = run(cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    json(&out)
}

fn env_of(report: &serde_json::Value, tool: &str) -> Vec<String> {
    stage(report, tool)["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_jax_program_runs_with_xlas_settings_and_its_report_says_what_they_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let report = run_python(tmp.path(), "import jax\nprint('step')\n", None);
    let memcheck = env_of(&report, "memcheck");
    for setting in [
        "XLA_FLAGS=--xla_gpu_autotune_level=0 --xla_gpu_force_compilation_parallelism=1",
        "XLA_PYTHON_CLIENT_PREALLOCATE=false",
        "XLA_PYTHON_CLIENT_ALLOCATOR=platform",
    ] {
        assert!(memcheck.iter().any(|e| e == setting), "{memcheck:?}");
    }
    // The plain run runs the kernels the user runs; only XLA's 75%
    // reservation goes, so its peak is what the program holds.
    let plain = env_of(&report, "plain");
    assert!(
        plain
            .iter()
            .any(|e| e == "XLA_PYTHON_CLIENT_PREALLOCATE=false")
    );
    assert!(
        !plain.iter().any(|e| e.starts_with("XLA_FLAGS=")),
        "{plain:?}"
    );
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("XLA ran without its GEMM autotuner"),
        "{notes}"
    );
    // No PyTorch here: nothing to say of its caching allocator.
    assert!(!notes.contains("PyTorch's caching allocator"), "{notes}");
    let csan = stage(&report, "csan");
    assert_eq!(csan["outcome"], "skipped");
    assert!(
        csan["reason"]
            .as_str()
            .unwrap()
            .contains("never imported torch (it imported JAX)"),
        "{csan}"
    );
}

#[test]
fn the_users_xla_flags_are_kept_before_cudawatchs() {
    let tmp = tempfile::tempdir().unwrap();
    let report = run_python(tmp.path(), "import jax\n", Some("--xla_dump_to=/tmp/dump"));
    assert!(
        env_of(&report, "memcheck").iter().any(|e| e
            == "XLA_FLAGS=--xla_dump_to=/tmp/dump --xla_gpu_autotune_level=0 \
                    --xla_gpu_force_compilation_parallelism=1"),
        "{report}"
    );
}

#[test]
fn a_pytorch_program_gets_the_allocator_note_and_no_jax_note() {
    let tmp = tempfile::tempdir().unwrap();
    let report = run_python(tmp.path(), "import torch\n", None);
    let notes = report["notes"].to_string();
    assert!(notes.contains("PyTorch's caching allocator"), "{notes}");
    assert!(!notes.contains("XLA"), "{notes}");
}

#[test]
fn a_real_jax_step_reads_back_clean_with_xlas_kernels_not_gating() {
    // H100, jax 0.11.2: the step's run directory as `cudawatch run` left it
    // (synccheck's compute-sanitizer died of SIGSEGV beside the others and
    // ran again alone; ncu found two of XLA's GEMM fusions uncoalesced).
    let dir = sample("beyond/jax_step/run-cudawatch");
    let mut cmd = cudawatch();
    cmd.args(["report", "--format", "json"]).arg(&dir);
    let out = run(cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    for s in report["stages"].as_array().unwrap() {
        assert!(
            ["clean", "skipped", "findings"].contains(&s["outcome"].as_str().unwrap()),
            "{s}"
        );
    }
    assert_eq!(stage(&report, "synccheck")["outcome"], "clean");
    assert!(
        report["warnings"]
            .to_string()
            .contains("compute-sanitizer itself died of signal 11 (SIGSEGV)")
    );
    // XLA's GEMM fusions are XLA's, not cuBLAS's (`gemm` in their names)
    // and not the user's.
    for finding in report["findings"].as_array().unwrap() {
        assert_eq!(finding["owner"]["component"], "XLA (JAX)", "{finding}");
    }
    assert_eq!(report["findings"].as_array().unwrap().len(), 2);
    // What `cudawatch run` wrote there says the same of every stage.
    let committed = read_json(&dir.join("report.json"));
    let said = |r: &serde_json::Value| -> Vec<(String, String, String)> {
        r["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let text = |k: &str| s[k].as_str().unwrap().to_string();
                (text("tool"), text("outcome"), text("reason"))
            })
            .collect()
    };
    assert_eq!(said(&committed), said(&report));
}

#[test]
fn the_users_pallas_kernel_gates_at_the_users_line_and_its_fix_is_clean() {
    // H100, jax 0.11.2: a Pallas kernel that accumulates into an output
    // nobody zeroed (tests/gpu/real/jax_pallas_accumulate.py).
    let report_of = |run: &str| {
        let mut cmd = cudawatch();
        cmd.args(["report", "--format", "json"])
            .arg(sample("beyond/jax_pallas_accumulate").join(run));
        run_out(cmd)
    };
    let (code, report) = report_of("run-cudawatch");
    assert_eq!(code, 1);
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1);
    let read = &findings[0];
    assert_eq!(read["kind"], "uninitialized_read");
    assert_eq!(read["kernel"], "scale_kernel");
    assert_eq!(read["count"], 1024);
    assert_eq!(read["owner"]["owner"], "user", "{read}");
    assert_eq!(read["python_frame"]["line"], 41, "{read}");
    let (code, fixed) = report_of("run-cudawatch-fixed");
    assert_eq!(code, 0, "{fixed}");
    assert!(fixed["findings"].as_array().unwrap().is_empty());
}

fn run_out(cmd: std::process::Command) -> (i32, serde_json::Value) {
    let out = run(cmd);
    (out.code, json(&out))
}

#[test]
fn xlas_out_of_memory_is_the_root_cause_at_the_users_line() {
    // H100, jax 0.11.2: a 125 GiB batch (tests/gpu/beyond/jax_oom.py),
    // `cudawatch run --stages plain,memcheck`, read back.
    let mut cmd = cudawatch();
    cmd.args(["--color", "never", "report"])
        .arg(sample("beyond/jax_oom/run-cudawatch"));
    let out = run(cmd);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "root cause: plain out_of_memory at {}: out of GPU memory (XLA): tried to allocate \
             125.02GiB (GPU_0_bfc)",
            captured("tests/gpu/beyond/jax_oom.py:21")
        )),
        "{}",
        out.stdout
    );
}
