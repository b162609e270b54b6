//! `cudawatch doctor` against fakes that replay the GPU machine
//! (sample-reports/doctor/): a fake nvidia-smi, a fake Python, a fake nvcc
//! and the fake tools, each misbehaving on demand; and `cudawatch run`
//! refusing to call a stage clean when doctor found its tool broken.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::helpers::{Output, cudawatch, read_json, root, run};

/// doctor with only the fakes (and the shell's basics) on PATH.
fn doctor(cache: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let fakes = root().join("tests/fakes");
    let mut cmd = cudawatch();
    cmd.env("PATH", format!("{}:/usr/bin:/bin", fakes.display()))
        .env("CUDAWATCH_CACHE_DIR", cache)
        .env(
            "CUDAWATCH_COMPUTE_SANITIZER",
            fakes.join("compute-sanitizer"),
        )
        .env("CUDAWATCH_NCU", fakes.join("ncu"))
        .env_remove("FAKE_CASE")
        .env_remove("PYTORCH_CUDA_ALLOC_CONF")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .arg("doctor")
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(cmd)
}

fn checks(o: &Output) -> Vec<Value> {
    let env: Value =
        serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout));
    env["checks"].as_array().unwrap().clone()
}

fn find<'a>(checks: &'a [Value], id: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {checks:?}"))
}

#[test]
fn the_gpu_machine_as_captured_is_all_ok() {
    let tmp = tempfile::tempdir().unwrap();
    let o = doctor(tmp.path(), &[], &[]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("ok       GPU 0: NVIDIA H100 80GB HBM3, compute capability 9.0"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("compute-sanitizer 2025.3.1.0 checked the probe: 0 errors")
    );
    // The machine's compute-sanitizer 2025.3.1 analyses library kernels in
    // racecheck, and no newer one is pip installed: a hint, not a problem.
    assert!(
        o.stdout.contains(
            "warning  racecheck, synccheck and initcheck leave library kernels out: compute-sanitizer 2025.3.1.0 analyses"
        ) && o
            .stdout
            .contains("fix: pip install nvidia-cuda-sanitizer-api"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .trim_end()
            .ends_with("doctor: 0 problems, 1 warning"),
        "{}",
        o.stdout
    );
}

#[test]
fn a_driver_older_than_pytorch_and_the_toolkit_is_a_problem_with_its_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let o = doctor(
        tmp.path(),
        &[("FAKE_SMI_CUDA", "12.4")],
        &["--format", "json"],
    );
    assert_eq!(o.code, 1);
    let c = checks(&o);
    let torch = find(&c, "torch");
    assert_eq!(torch["status"], "problem");
    assert!(
        torch["detail"]
            .as_str()
            .unwrap()
            .contains("this one supports 12.4"),
        "{torch}"
    );
    assert!(
        torch["fix"]
            .as_str()
            .unwrap()
            .contains("update the NVIDIA driver")
    );
    assert_eq!(find(&c, "toolkit")["status"], "problem");
}

#[test]
fn a_gpu_pytorch_was_not_built_for_is_named_as_the_cause_of_no_kernel_image() {
    let tmp = tempfile::tempdir().unwrap();
    let o = doctor(
        tmp.path(),
        &[("FAKE_SMI_CC", "6.1")],
        &[
            "--quick",
            "--python",
            root().join("tests/fakes/python3").to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 1);
    assert!(
        o.stdout
            .contains("PROBLEM  PyTorch has kernels for GPU 0: GPU 0 is sm_61"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("no kernel image is available"));
}

#[test]
fn gpu_memory_held_by_a_zombie_is_a_problem() {
    let tmp = tempfile::tempdir().unwrap();
    // A real zombie: a child that exited and that nobody reaped (yet).
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let apps = format!("GPU-b0fb79d7-ef9a-3adc-1dfa-53f88fc0e1bb, {pid}, python3, 30000 MiB");
    let o = doctor(tmp.path(), &[("FAKE_SMI_APPS", &apps)], &["--quick"]);
    let _ = child.wait();
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stdout.contains(&format!("PROBLEM  GPU memory held by other processes: 30000 MiB on GPU 0 held by pid {pid} (python3), a zombie")),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("fix: kill or restart its parent process"));
}

#[test]
fn a_sanitizer_that_cannot_instrument_and_an_ncu_without_counters_fail_the_probe() {
    let tmp = tempfile::tempdir().unwrap();
    let o = doctor(
        tmp.path(),
        &[("FAKE_MODE", "exit255")],
        &["--format", "json"],
    );
    assert_eq!(o.code, 1);
    let c = checks(&o);
    let probe = find(&c, "probe_sanitizer");
    assert_eq!(probe["status"], "problem");
    assert!(
        probe["detail"]
            .as_str()
            .unwrap()
            .contains("exits 255 before instrumenting anything"),
        "{probe}"
    );
    assert_eq!(
        probe["breaks"],
        serde_json::json!(["memcheck", "racecheck", "initcheck", "synccheck"])
    );
    let o = doctor(tmp.path(), &[("FAKE_MODE", "no-permission")], &[]);
    assert_eq!(o.code, 1);
    assert!(
        o.stdout.contains(
            "PROBLEM  ncu may read the performance counters: ncu 2025.3.1.0: ERR_NVGPUCTRPERM"
        ),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("NVreg_RestrictProfilingToAdminUsers=0"));
}

#[test]
fn a_hung_nvidia_smi_or_probe_is_stopped_at_its_limit_and_said_so() {
    // Before: nvidia-smi and the probes ran without a limit that stopped
    // their process group; a GPU in a bad state hung doctor and every run.
    let tmp = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let o = doctor(
        tmp.path(),
        &[("FAKE_SMI_MODE", "hang"), ("CUDAWATCH_QUERY_TIMEOUT", "1")],
        &["--format", "json"],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    let c = checks(&o);
    let gpu = c
        .iter()
        .find(|c| {
            c["detail"]
                .as_str()
                .unwrap_or("")
                .contains("nvidia-smi did not answer within 1 s")
        })
        .unwrap_or_else(|| panic!("{c:?}"));
    assert_eq!(gpu["status"], "problem", "{gpu}");

    let o = doctor(
        tmp.path(),
        &[("FAKE_MODE", "hang"), ("CUDAWATCH_QUERY_TIMEOUT", "1")],
        &["--format", "json"],
    );
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    let c = checks(&o);
    let probe = find(&c, "probe_sanitizer");
    assert_eq!(probe["status"], "problem");
    assert!(
        probe["detail"]
            .as_str()
            .unwrap()
            .contains("did not finish the probe within 1 s and was stopped"),
        "{probe}"
    );
    assert_eq!(
        probe["breaks"],
        serde_json::json!(["memcheck", "racecheck", "initcheck", "synccheck"])
    );
}

#[test]
fn a_sweep_on_a_hung_nvidia_smi_warns_and_runs_unpinned() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("sweep.toml");
    std::fs::write(
        &file,
        "[defaults]\nstages = [\"plain\"]\n\n[[target]]\nname = \"t\"\ncommand = [\"true\"]\n",
    )
    .unwrap();
    let fakes = root().join("tests/fakes");
    let started = std::time::Instant::now();
    let o = run(cudawatch()
        .env("PATH", format!("{}:/usr/bin:/bin", fakes.display()))
        .env("FAKE_SMI_MODE", "hang")
        .env("CUDAWATCH_QUERY_TIMEOUT", "1")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .arg("sweep")
        .arg(&file)
        .arg("--out-dir")
        .arg(tmp.path().join("night")));
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("warning: nvidia-smi did not answer within 1 s and was stopped"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_run_never_calls_a_stage_clean_when_doctor_found_its_tool_broken() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    // Doctor probes once and finds compute-sanitizer unable to instrument.
    assert_eq!(doctor(&cache, &[("FAKE_MODE", "exit255")], &[]).code, 1);
    // The run's own memcheck stage replays a clean capture, yet with
    // doctor's finding (same driver, same tool) it is not clean.
    let fakes = root().join("tests/fakes");
    let out = tmp.path().join("run");
    let o = run(crate::run::fake_run("clean", &out, "plain,memcheck", &[])
        .env("PATH", format!("{}:/usr/bin:/bin", fakes.display()))
        .env("CUDAWATCH_CACHE_DIR", &cache));
    assert_eq!(o.code, 3, "{}", o.stderr);
    let report = read_json(&out.join("report.json"));
    let memcheck = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "memcheck")
        .unwrap();
    assert_eq!(memcheck["outcome"], "inconclusive");
    assert!(
        memcheck["reason"]
            .as_str()
            .unwrap()
            .starts_with("doctor found memcheck broken here"),
        "{memcheck}"
    );
    assert_eq!(report["environment"]["probed"], true);
    // The same run with a healthy doctor behind it is clean.
    let healthy = tmp.path().join("healthy");
    assert_eq!(doctor(&healthy, &[], &[]).code, 0);
    let out = tmp.path().join("run2");
    let o = run(crate::run::fake_run("clean", &out, "plain,memcheck", &[])
        .env("PATH", format!("{}:/usr/bin:/bin", fakes.display()))
        .env("CUDAWATCH_CACHE_DIR", &healthy));
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn without_a_gpu_doctor_says_so_and_what_still_works() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = cudawatch();
    cmd.env("PATH", "/usr/bin:/bin")
        .env("CUDAWATCH_CACHE_DIR", tmp.path())
        .args(["doctor", "--quick"]);
    let o = run(cmd);
    assert_eq!(o.code, 1);
    let first = o.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("PROBLEM  GPUs visible: no GPU: nvidia-smi is not on PATH"),
        "{first}"
    );
    assert!(first.contains("cudawatch parse") && first.contains("cudawatch report"));
    // A driver that does not answer is said in its own words.
    let o = doctor(tmp.path(), &[("FAKE_SMI_MODE", "fail")], &["--quick"]);
    assert!(o.stdout.contains("nvidia-smi failed: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"), "{}", o.stdout);
}

#[test]
fn settings_that_change_what_the_tools_see_are_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let o = doctor(
        tmp.path(),
        &[
            ("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"),
            ("CUDA_VISIBLE_DEVICES", ""),
        ],
        &["--quick", "--format", "json"],
    );
    let c = checks(&o);
    assert_eq!(find(&c, "env_alloc_conf")["status"], "warning");
    assert_eq!(find(&c, "env_visible_devices")["status"], "problem");
    assert_eq!(o.code, 1);
}

#[test]
fn on_a_gpu_shared_through_mps_doctor_says_so_and_probes_ncu_outside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let pipe = crate::mps::daemon_pipe();
    let pipe = pipe.path().to_str().unwrap();
    let o = doctor(
        tmp.path(),
        &[
            ("CUDA_MPS_PIPE_DIRECTORY", pipe),
            // As the H100 listed it with a private daemon
            // (sample-reports/beyond/mps/doctor.stdout).
            (
                "FAKE_SMI_APPS",
                "GPU-b0fb79d7-ef9a-3adc-1dfa-53f88fc0e1bb, 1, nvidia-cuda-mps-server, 66 MiB",
            ),
        ],
        &["--format", "json"],
    );
    let all = checks(&o);
    let find = |id: &str| {
        all.iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id}: {all:?}"))
            .clone()
    };
    let mps = find("mps");
    assert!(
        mps["detail"]
            .as_str()
            .unwrap()
            .contains("the ncu stage runs its program outside MPS"),
        "{mps}"
    );
    // The fake ncu refuses an MPS client as the real one did; the probe,
    // kept outside MPS like the stage, is measured.
    assert_eq!(find("probe_ncu")["status"], "ok", "{all:?}");
    // Its server holds memory, and is not a stray run to kill.
    let held = find("gpu_memory");
    assert_eq!(held["status"], "ok", "{held}");
    assert!(
        held["detail"].as_str().unwrap().contains("the MPS server"),
        "{held}"
    );
}

#[test]
fn doctor_says_whether_gpu_core_dumps_can_be_read_here() {
    let tmp = tempfile::tempdir().unwrap();
    let o = doctor(tmp.path(), &[], &["--quick", "--format", "json"]);
    let found = find(&checks(&o), "tool_cuda_gdb").clone();
    assert_eq!(found["status"], "ok", "{found}");
    assert!(
        found["detail"]
            .as_str()
            .unwrap()
            .starts_with("cuda-gdb 13.0 ("),
        "{found}"
    );
    // Without a cuda-gdb anywhere: a warning that says what is lost.
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["nvidia-smi", "python3"] {
        std::os::unix::fs::symlink(root().join("tests/fakes").join(tool), bin.join(tool)).unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let o = doctor(
        tmp.path(),
        &[("PATH", path.as_str())],
        &["--quick", "--format", "json"],
    );
    let missing = find(&checks(&o), "tool_cuda_gdb").clone();
    assert_eq!(missing["status"], "warning", "{missing}");
    assert!(
        missing["detail"]
            .as_str()
            .unwrap()
            .contains("names the faulting kernel without its line"),
        "{missing}"
    );
}
