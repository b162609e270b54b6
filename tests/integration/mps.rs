//! A GPU shared through MPS: ncu refuses to profile an MPS client (exit 1,
//! the program run unprofiled; `sample-reports/beyond/mps/`), so the ncu
//! stage keeps its program outside MPS when a daemon's control pipe is
//! where the CUDA driver looks. The fake ncu replays that refusal whenever
//! the pipe it would connect to is there.

use crate::helpers::{read_json, root, run};
use crate::run::{fake_run, stage};

/// A folder that looks like an MPS daemon's pipe folder to the driver.
pub(crate) fn daemon_pipe() -> tempfile::TempDir {
    let pipe = tempfile::tempdir().unwrap();
    std::fs::write(pipe.path().join("control"), "").unwrap();
    pipe
}

#[test]
fn on_a_gpu_shared_through_mps_ncu_profiles_the_program_outside_it() {
    let (tmp, pipe) = (tempfile::tempdir().unwrap(), daemon_pipe());
    let out = run(
        fake_run("coalescing", tmp.path(), "plain,memcheck,ncu", &[])
            .env("CUDA_MPS_PIPE_DIRECTORY", pipe.path()),
    );
    assert_eq!(
        out.code, 1,
        "the strided gather measured and over the limit, as without MPS: {}",
        out.stderr
    );
    let report = read_json(&tmp.path().join("report.json"));
    let ncu = stage(&report, "ncu");
    assert_eq!(ncu["outcome"], "findings", "{ncu}");
    assert!(
        ncu["reason"]
            .as_str()
            .unwrap()
            .contains("its program ran outside MPS"),
        "{ncu}"
    );
    let outside = tmp.path().join("ncu/outside-mps").display().to_string();
    assert!(
        ncu["env"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(format!(
                "CUDA_MPS_PIPE_DIRECTORY={outside}"
            ))),
        "the stage's record says where the driver looked: {ncu}"
    );
    assert_eq!(report["coalescing"].as_array().unwrap().len(), 2);
    // The other stages stay MPS clients, as the user's program is.
    let memcheck = stage(&report, "memcheck");
    assert!(!memcheck.to_string().contains("outside-mps"), "{memcheck}");
}

#[test]
fn without_a_daemon_the_ncu_stage_leaves_the_mps_pipe_alone() {
    let (tmp, empty) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out =
        run(fake_run("coalescing", tmp.path(), "ncu", &[])
            .env("CUDA_MPS_PIPE_DIRECTORY", empty.path()));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = read_json(&tmp.path().join("report.json"));
    let ncu = stage(&report, "ncu");
    assert!(!ncu.to_string().contains("MPS"), "{ncu}");
}

#[test]
fn ncus_refusal_of_an_mps_client_is_inconclusive_with_what_to_do() {
    // A wrapper that puts the program back on the daemon's pipe: ncu
    // refuses it, as it did on the H100.
    let (tmp, pipe) = (tempfile::tempdir().unwrap(), daemon_pipe());
    let wrapper = tmp.path().join("ncu-on-mps");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nCUDA_MPS_PIPE_DIRECTORY='{}' exec '{}' \"$@\"\n",
            pipe.path().display(),
            root().join("tests/fakes/ncu").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let run_dir = tmp.path().join("run");
    let out = run(fake_run(
        "coalescing",
        &run_dir,
        "ncu",
        &["--ncu", wrapper.to_str().unwrap()],
    ));
    assert_eq!(out.code, 3, "never clean without a profile: {}", out.stderr);
    let report = read_json(&run_dir.join("report.json"));
    let reason = stage(&report, "ncu")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("Profiling is not supported with Multi-Process Server (MPS)")
            && reason.contains("set CUDA_MPS_PIPE_DIRECTORY to the MPS daemon's pipe folder"),
        "{reason}"
    );
}
