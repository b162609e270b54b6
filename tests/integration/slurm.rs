//! A real Slurm cluster (Debian's slurm-wlm and munge, one node on
//! loopback, started by tests/slurm/cluster.sh) runs the documented job
//! array script, docs/sweeps/cudawatch-sweep.sbatch: four array tasks, one
//! shard each, with the fake tools; `cudawatch merge` then has every
//! target exactly once. `.ci/run` installs Slurm; the test skips, saying
//! why, only where it cannot be installed or started (not root).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::{cudawatch, root, run, sample};

struct Cluster(std::path::PathBuf);

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(root().join("tests/slurm/cluster.sh"))
            .arg("stop")
            .arg(&self.0)
            .status();
    }
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        || Path::new("/usr/sbin").join(name).is_file()
}

#[test]
#[ignore = "needs Slurm (slurm-wlm, munge) and root; .ci/run installs them and runs it"]
fn a_slurm_job_array_runs_one_shard_per_task_and_merge_has_every_target_once() {
    let missing: Vec<&str> = ["sbatch", "slurmctld", "slurmd", "munged"]
        .into_iter()
        .filter(|n| !on_path(n))
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "SKIPPED: Slurm is not installed here ({} missing); .ci/run installs slurm-wlm and munge",
            missing.join(", ")
        );
        return;
    }
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: a test Slurm cluster needs root (munged --force, slurmd)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("slurm");
    let started = Command::new(root().join("tests/slurm/cluster.sh"))
        .arg("start")
        .arg(&state)
        .output()
        .unwrap();
    let _cluster = Cluster(state.clone());
    assert!(
        started.status.success(),
        "cluster: {}",
        String::from_utf8_lossy(&started.stderr)
    );
    let conf = state.join("slurm.conf");

    let mut text = String::from(
        "[defaults]\nstages = [\"plain\", \"memcheck\"]\nrun-args = [\"--grace\", \"0.5\"]\n",
    );
    for i in 0..10 {
        let (case, expect) = if i % 4 == 0 {
            ("oob_write", "findings")
        } else {
            ("clean", "clean")
        };
        text += &format!(
            "\n[[target]]\nname = \"t{i}\"\ncommand = [\"sh\", \"-c\", \"exit 0\"]\nenv = {{ FAKE_CASE = \"{}\" }}\nexpect = \"{expect}\"\n",
            sample(case).display()
        );
    }
    let file = tmp.path().join("nightly.toml");
    std::fs::write(&file, text).unwrap();
    let sweep_dir = tmp.path().join("sweeps");
    let mut sbatch = Command::new("sbatch");
    sbatch
        .current_dir(tmp.path())
        .env("SLURM_CONF", &conf)
        .env("SWEEP_FILE", &file)
        .env("SWEEP_DIR", &sweep_dir)
        .env("CUDAWATCH", env!("CARGO_BIN_EXE_cudawatch"))
        .env(
            "CUDAWATCH_COMPUTE_SANITIZER",
            root().join("tests/fakes/compute-sanitizer"),
        )
        .env("CUDAWATCH_NCU", root().join("tests/fakes/ncu"))
        .env("NO_COLOR", "1")
        .args(["--wait", "--quiet"])
        .arg(root().join("docs/sweeps/cudawatch-sweep.sbatch"));
    let start = Instant::now();
    let mut child = sbatch.spawn().unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(240) {
            let _ = child.kill();
            panic!(
                "the job array did not finish in 4 minutes; logs in {}",
                state.join("log").display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // The array tasks' output files (--output in the script).
    let logs: String = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(status.success(), "sbatch --wait: {status}\n{logs}");
    // Each array task found its shard in Slurm's variables.
    for i in 0..4 {
        assert!(logs.contains(&format!("shard {i}/4")), "task {i}:\n{logs}");
    }
    let mut merge = cudawatch();
    merge
        .arg("merge")
        .args((0..4).map(|i| sweep_dir.join(format!("shard-{i}"))))
        .args(["--format", "json"]);
    let o = run(merge);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let report: Value = serde_json::from_str(&o.stdout).unwrap();
    let mut names: Vec<&str> = report["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        report["targets"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["state"] == "finished" && t["as_expected"] == true),
        "{report}"
    );
    names.sort_unstable();
    let mut expected: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
    expected.sort();
    assert_eq!(names, expected, "every target exactly once");
    assert_eq!(report["shards"].as_array().unwrap().len(), 4);
}
