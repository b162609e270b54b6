//! Multi-GPU programs as users launch them (`torchrun --nproc_per_node=2`):
//! every stage keeps the GPUs the program's ranks use, and findings name
//! their rank. Real output of two-rank NCCL programs on two H100s is in
//! sample-reports/multi/ (scripts/capture-multi.sh); the supervisor side
//! runs a fake torchrun whose two workers the fake nvidia-smi shows on two
//! GPUs.

use std::path::Path;

use crate::helpers::{captured, cudawatch, json, read_json, root, run, sample};

fn parse_json(file: &Path) -> serde_json::Value {
    let out = run(cudawatch().args(["parse", "--format", "json"]).arg(file));
    json(&out)
}

fn findings(value: &serde_json::Value) -> &Vec<serde_json::Value> {
    value["findings"].as_array().unwrap()
}

fn verdict(value: &serde_json::Value) -> String {
    value["verdict"].to_string()
}

#[test]
fn a_bad_label_on_rank_1_is_rank_1s_failure_at_the_users_line() {
    // torchrun prefixes rank 1's traceback with `[rank1]:`; before, the
    // prefix hid the traceback and the root cause was ATen's Loss.cu:245
    // with no user line and no rank.
    let report = parse_json(&sample("multi/bad_label_rank1").join("plain.stderr"));
    let verdict = verdict(&report);
    assert!(
        verdict.contains("root cause: rank 1 failed first: plain device_assert")
            && verdict.contains(&format!(
                "launched from {}",
                captured("tests/gpu/multi/bad_label_rank1.py:15")
            )),
        "{verdict}"
    );
    for site in findings(&report) {
        assert_eq!(site["processes"][0]["rank"], 1, "{site}");
        // torchrun's root cause block gives the worker's pid.
        assert_eq!(site["processes"][0]["pid"], 1051, "{site}");
    }
    // torchrun's own ChildFailedError traceback is not a finding.
    assert!(!report.to_string().contains("ChildFailedError"));
}

#[test]
fn an_out_of_memory_on_rank_1_is_found_at_its_line_with_its_rank() {
    let report = parse_json(&sample("multi/oom_rank1").join("plain.stderr"));
    let oom = crate::helpers::site_of_kind(&report, "out_of_memory");
    assert_eq!(oom["location"]["line"], 15, "{oom}");
    assert_eq!(oom["processes"][0]["rank"], 1);
    assert!(verdict(&report).contains("rank 1 failed first"), "{report}");
    assert_eq!(findings(&report).len(), 1, "nothing but the OOM: {report}");
}

#[test]
fn a_collective_timeout_names_the_collective_the_waiting_rank_and_the_users_line() {
    // Rank 1 skipped its last all-reduce; rank 0's NCCL watchdog timed out
    // after the process group's 40 s (the run without CUDA_LAUNCH_BLOCKING).
    let report = parse_json(&sample("multi/collective_mismatch").join("unblocked.stderr"));
    let site = crate::helpers::site_of_kind(&report, "collective_timeout");
    let message = site["message"].as_str().unwrap();
    assert!(
        message.contains("ALLREDUCE (sequence 11)") && message.contains("(40 s)"),
        "{message}"
    );
    assert_eq!(site["processes"][0]["rank"], 0);
    assert_eq!(
        site["location"]["line"], 34,
        "common.py's all_reduce: {site}"
    );
    let frames = site["host_frames"].to_string();
    assert!(frames.contains("collective_mismatch.py"), "{frames}");
    assert_eq!(report["exit_code"], 1);
}

/// A fake torchrun in `dir`: two workers, each in a session of its own as
/// torchrun's elastic agent starts them, with `RANK`, `LOCAL_RANK` and
/// `WORLD_SIZE`; each fails (as rank 1 failed on the H100 with
/// `cudaErrorInvalidDevice`) unless it sees two GPUs; then the captured
/// output of a two-rank run is replayed.
fn fake_torchrun(dir: &Path, marker: &str, replay: &Path) -> std::path::PathBuf {
    let path = dir.join("torchrun");
    let script = format!(
        r#"#!/usr/bin/env bash
for r in 0 1; do
  RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 setsid bash -c '
    case "$CUDA_VISIBLE_DEVICES" in *,*) ;; ?*) echo "[rank$RANK]: invalid device ordinal $RANK" >&2; exit 1 ;; esac
    exec -a "worker-{marker}" sleep 4' &
done
fail=0
for job in $(jobs -p); do wait "$job" || fail=1; done
cat "${{REPLAY_STDERR:-{replay}/plain.stderr}}" >&2
[ $fail = 0 ] || exit 1
exit $(cat '{replay}/plain.exit')
"#,
        replay = replay.display()
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `cudawatch run --stages STAGES --out-dir OUT_DIR ... --` on a machine
/// the fake nvidia-smi shows with two GPUs, the workers named `marker` on
/// them, the fakes (and a fake torchrun in `dir`) first on `PATH`; the
/// caller adds the program.
fn fake_two_gpu_run(
    dir: &Path,
    marker: &str,
    stages: &str,
    out_dir: &Path,
) -> std::process::Command {
    let path = format!(
        "{}:{}:{}",
        dir.display(),
        root().join("tests/fakes").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = cudawatch();
    command
        .env("PATH", path)
        .env("FAKE_CASE", sample("oob_write"))
        .env("FAKE_SMI_FREE", "0, GPU-a, 79000\n1, GPU-b, 79000")
        .env("FAKE_SMI_RANKS", format!("{marker}=900"))
        .args(["run", "--grace", "0.5", "--stages", stages])
        .arg("--out-dir")
        .arg(out_dir)
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .arg("--ncu")
        .arg(root().join("tests/fakes/ncu"))
        .arg("--");
    command
}

#[test]
fn torchrun_with_two_ranks_keeps_both_gpus_in_every_stage() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!("cudawatch-test-rank-{}", std::process::id());
    let torchrun = fake_torchrun(tmp.path(), &marker, &sample("multi/bad_label_rank1"));
    let out_dir = tmp.path().join("run");
    let out = run(
        fake_two_gpu_run(tmp.path(), &marker, "plain,racecheck,ncu", &out_dir)
            .arg(&torchrun)
            .args(["--nproc_per_node=2", "train.py"]),
    );
    let plain = read_json(&out_dir.join("plain/stage.json"));
    // Both workers, though each runs in a session of its own, are the
    // program's, with their ranks and GPUs.
    let processes = plain["gpu_processes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut ranks: Vec<(i64, String)> = processes
        .iter()
        .map(|p| {
            (
                p["ranks"]["rank"].as_i64().unwrap_or(-1),
                p["gpu"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    ranks.sort();
    assert_eq!(
        ranks,
        [(0, "GPU-a".to_string()), (1, "GPU-b".to_string())],
        "{plain}\n{}",
        out.stderr
    );
    // The plain run of a launcher of several NCCL processes leaves
    // CUDA_LAUNCH_BLOCKING unset (it made a desync hang past 200 s).
    let env = plain["env"].to_string();
    assert!(!env.contains("CUDA_LAUNCH_BLOCKING"), "{env}");
    // A collective's timeout ends the job without NCCL's minute of waiting
    // for flight-recorder dumps, which land in the stage's folder.
    assert!(
        env.contains("TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC=1000"),
        "{env}"
    );
    let fr = format!(
        "TORCH_FR_DUMP_TEMP_FILE={}",
        out_dir.join("plain/fr_trace_rank_").display()
    );
    assert!(env.contains(&fr), "{env}");
    // torchrun's `--tee 3`, from its environment: every worker line names
    // its local rank.
    assert!(env.contains("PET_TEE=3"), "{env}");
    for stage in ["racecheck", "ncu"] {
        let record = read_json(&out_dir.join(stage).join("stage.json"));
        let env = record["env"].to_string();
        assert!(
            env.contains("CUDA_VISIBLE_DEVICES=GPU-a,GPU-b")
                || env.contains("CUDA_VISIBLE_DEVICES=0,1")
                || !env.contains("CUDA_VISIBLE_DEVICES"),
            "{stage} keeps both GPUs: {env}"
        );
        assert!(
            !record.to_string().contains("invalid device ordinal"),
            "{stage}"
        );
    }
    // NCCL's kernels are among the libraries' left out of ncu's filter: a
    // collective's kernel would wait on its peers' under ncu.
    let ncu = read_json(&out_dir.join("ncu/stage.json"));
    assert!(
        ncu["command"].to_string().contains("|cufft|nccl|"),
        "ncu leaves NCCL's kernels out: {ncu}"
    );
    let report = read_json(&out_dir.join("report.json"));
    let notes = report["notes"].to_string();
    assert!(notes.contains("left CUDA_LAUNCH_BLOCKING unset"), "{notes}");
    // Rank 1's device assert: ncu would only profile up to it (138 s of a
    // 167 s check on two H200s), so it is not run.
    let ncu = crate::run::stage(&report, "ncu");
    assert_eq!(ncu["outcome"], "skipped", "{ncu}");
    assert!(
        ncu["reason"]
            .as_str()
            .unwrap()
            .starts_with("blocked by the plain run's device assert at Loss.cu:245"),
        "{ncu}"
    );
    let schedule = read_json(&out_dir.join("run.json"))["schedule"].to_string();
    assert!(schedule.contains("the 2 the program used"), "{schedule}");
    // The plain run's finding names rank 1, with the GPU its worker used.
    assert!(
        out.stderr.contains("root cause: rank 1 failed first"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("in: rank 1 (pid 1051, GPU GPU-b)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_collective_timeout_is_answered_in_the_plain_runs_time_naming_both_ranks() {
    // collective_mismatch on two H100s: rank 1 skipped an all-reduce, rank
    // 0 waited in it until the process group's 40 s timeout. Under every
    // tool the ranks would wait again, each stage until its own limit (the
    // issue saw no answer after 10 minutes). The tool stages are blocked
    // by the plain run's timeout: the answer comes in the plain run's time,
    // naming the waiting rank, the collective and the missing rank.
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!("cudawatch-test-hang-{}", std::process::id());
    let torchrun = fake_torchrun(tmp.path(), &marker, &sample("multi/collective_mismatch"));
    let out_dir = tmp.path().join("run");
    let stages = "plain,memcheck,racecheck,initcheck,synccheck,ncu";
    let started = std::time::Instant::now();
    let out = run(fake_two_gpu_run(tmp.path(), &marker, stages, &out_dir)
        .env("FAKE_SLEEP", "30")
        .env(
            "REPLAY_STDERR",
            sample("multi/collective_mismatch").join("unblocked.stderr"),
        )
        .arg(&torchrun)
        .args(["--nproc_per_node=2", "collective_mismatch.py"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    // Each fake tool takes 30 s before it prints anything.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    let report = read_json(&out_dir.join("report.json"));
    for tool in ["memcheck", "racecheck", "initcheck", "synccheck", "ncu"] {
        let s = crate::run::stage(&report, tool);
        assert_eq!(s["outcome"], "skipped", "{tool}: {s}");
        assert!(
            s["reason"]
                .as_str()
                .unwrap()
                .contains("blocked by the plain run's collective timeout at common.py:34"),
            "{tool}: {s}"
        );
    }
    assert!(
        out.stderr.contains("rank 0 waited in ALLREDUCE")
            && out.stderr.contains("rank 1 never entered it"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("INCONCLUSIVE"), "{}", out.stderr);
}

/// A fake torchrun that starts its workers as torchrun does,
/// `$PYTHON_EXEC -u SCRIPT` with `RANK`, `LOCAL_RANK` and `WORLD_SIZE`,
/// each in a session of its own; the ranks in `FAKE_TORCHRUN_RANKS`
/// (default both of two). Without `PYTHON_EXEC` (the plain run) each
/// worker is a sleep named `worker-MARKER`.
fn fake_torchrun_exec(dir: &Path, marker: &str) -> std::path::PathBuf {
    let path = dir.join("torchrun");
    let script = format!(
        r#"#!/usr/bin/env bash
for r in ${{FAKE_TORCHRUN_RANKS:-0 1}}; do
  if [ -n "${{PYTHON_EXEC:-}}" ]; then
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 setsid "$PYTHON_EXEC" -u {marker}.py &
  else
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 setsid bash -c 'exec -a "worker-{marker}" sleep 2' &
  fi
done
fail=0
for job in $(jobs -p); do wait "$job" || fail=1; done
if [ -n "${{FAKE_FORGE_RANK1:-}}" ] && [ -n "${{PYTHON_EXEC:-}}" ]; then
  # The launcher writes rank 1's files itself, from rank 0's.
  dir=$(dirname "$PYTHON_EXEC")
  for f in xml log world; do cp "$dir/memcheck.rank0.$f" "$dir/memcheck.rank1.$f" 2>/dev/null; done
  echo 0 >"$dir/memcheck.rank1.exit"
fi
# A launcher that fails under the tool after its ranks ended well (an
# agent's own error, a crash at its teardown).
[ -n "${{FAKE_LAUNCHER_EXIT:-}}" ] && [ -n "${{PYTHON_EXEC:-}}" ] && exit "$FAKE_LAUNCHER_EXIT"
exit $fail
"#
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `cudawatch run --stages plain,memcheck -- torchrun --nproc_per_node=2`
/// over the PYTHON_EXEC-honouring fake, each rank's compute-sanitizer
/// replaying `rank_cases` (rank, capture); the run's folder and output.
fn run_per_rank(
    tmp: &Path,
    rank_cases: &[(u32, &str)],
    only_ranks: Option<&str>,
) -> (std::path::PathBuf, std::process::Output) {
    run_per_rank_seen(tmp, rank_cases, only_ranks, true)
}

/// [`run_per_rank`], with the GPU sampler seeing the workers or nothing
/// (a container whose nvidia-smi lists no process, a job too short).
fn run_per_rank_seen(
    tmp: &Path,
    rank_cases: &[(u32, &str)],
    only_ranks: Option<&str>,
    sampler_sees: bool,
) -> (std::path::PathBuf, std::process::Output) {
    run_per_rank_with(tmp, rank_cases, only_ranks, sampler_sees, &[])
}

/// [`run_per_rank_seen`], with more of the fakes' variables.
pub(crate) fn run_per_rank_with(
    tmp: &Path,
    rank_cases: &[(u32, &str)],
    only_ranks: Option<&str>,
    sampler_sees: bool,
    env: &[(&str, &str)],
) -> (std::path::PathBuf, std::process::Output) {
    let marker = format!("cudawatch-test-perrank-{}", std::process::id());
    let torchrun = fake_torchrun_exec(tmp, &marker);
    let out_dir = tmp.join("run");
    let path = format!(
        "{}:{}:{}",
        tmp.display(),
        root().join("tests/fakes").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = cudawatch();
    command
        .env("PATH", path)
        .env("FAKE_CASE", sample("clean"))
        .env("FAKE_SLEEP", "1.5")
        .env("FAKE_SMI_FREE", "0, GPU-a, 79000\n1, GPU-b, 79000");
    if sampler_sees {
        command.env("FAKE_SMI_RANKS", format!("{marker}=900"));
    }
    for (rank, case) in rank_cases {
        command.env(format!("FAKE_CASE_RANK{rank}"), sample(case));
    }
    if let Some(ranks) = only_ranks {
        command.env("FAKE_TORCHRUN_RANKS", ranks);
    }
    command.envs(env.iter().copied());
    let out = command
        .args(["run", "--grace", "0.5", "--stages", "plain,memcheck"])
        .arg("--out-dir")
        .arg(&out_dir)
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .arg("--")
        .arg(&torchrun)
        .args(["--nproc_per_node=2", "train.py"])
        .output()
        .unwrap();
    (out_dir, out)
}

#[test]
fn each_rank_runs_under_its_own_sanitizer_and_its_findings_name_it() {
    // One compute-sanitizer around torchrun wrote one XML for both ranks,
    // its records without a process: an out-of-bounds write on rank 1
    // only was found without its rank.
    // Each rank replays its own frontend's capture from two H200s: rank 0
    // a correct DDP step (NCCL's kernel-image probe only), rank 1 the
    // extension's out-of-bounds read, then its abort.
    let tmp = tempfile::tempdir().unwrap();
    let (out_dir, out) = run_per_rank(
        tmp.path(),
        &[
            (0, "multi/ddp_step/ranks-memcheck"),
            (1, "multi/oob_kernel_rank1/ranks-memcheck"),
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let memcheck = out_dir.join("memcheck");
    for rank in 0..2 {
        for file in ["xml", "log", "exit"] {
            let name = format!("memcheck.rank{rank}.{file}");
            assert!(memcheck.join(&name).is_file(), "{name}\n{stderr}");
        }
    }
    let record = read_json(&memcheck.join("stage.json"));
    let env = record["env"].to_string();
    assert!(env.contains("PYTHON_EXEC="), "{env}");
    assert!(
        !record["command"].to_string().contains("compute-sanitizer"),
        "the stage runs torchrun, each rank its own frontend: {record}"
    );
    let report = crate::helpers::judged(&out_dir);
    let stage = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "memcheck")
        .unwrap();
    // Rank 1's program aborted under the tool after its read: checked up
    // to there, so the stage cannot vouch; its finding gates all the same.
    assert_eq!(stage["outcome"], "inconclusive", "{stage}");
    // The stage's totals are both ranks' ERROR SUMMARY lines added up.
    assert_eq!(stage["summary"]["errors"], 8 + 13, "{stage}");
    let reason = stage["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("rank 1: ") && reason.contains("; rank 0: "),
        "each rank judged, the one that failed first: {reason}"
    );
    let read = crate::helpers::site_of_kind(&report, "invalid_access");
    let processes = read["processes"].as_array().unwrap();
    assert_eq!(processes.len(), 1, "rank 1's alone: {read}");
    assert_eq!(processes[0]["rank"], 1);
    assert_eq!(processes[0]["gpu"], "GPU-b", "{read}");
    assert_eq!(read["location"]["line"], 8, "{read}");
    assert!(
        stderr.contains("root cause: rank 1 failed first: memcheck invalid_access at cuda.cu:8"),
        "{stderr}"
    );
    let notes = report["notes"].to_string();
    assert!(
        notes.contains(
            "memcheck ran each of torchrun's workers under a compute-sanitizer of its own"
        ),
        "{notes}"
    );
    // NCCL's probe on both ranks is one site naming both, and no gate.
    let probe = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "api_error" && s.to_string().contains("NoKernelImage"))
        .expect("NCCL's probe");
    assert_eq!(probe["processes"].as_array().unwrap().len(), 2, "{probe}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

#[test]
fn a_rank_that_left_no_sanitizer_output_keeps_the_stage_from_clean() {
    let tmp = tempfile::tempdir().unwrap();
    // Both ranks of a correct DDP step, each under its own frontend (the
    // capture without `--error-exitcode`): every stage's rank checked.
    let step = "multi/ddp_step/ranks-memcheck";
    let (out_dir, out) = run_per_rank(tmp.path(), &[(0, step), (1, step)], None);
    let report = crate::helpers::judged(&out_dir);
    let stage = |report: &serde_json::Value| {
        report["stages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["tool"] == "memcheck")
            .cloned()
            .unwrap()
    };
    let memcheck = stage(&report);
    assert_eq!(
        memcheck["outcome"],
        "findings",
        "NCCL's probe, not gating: {memcheck}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Rank 1 of two never ran under the tool: not clean, and said.
    let tmp = tempfile::tempdir().unwrap();
    let (out_dir, out) = run_per_rank(tmp.path(), &[(0, step)], Some("0"));
    let report = crate::helpers::judged(&out_dir);
    let memcheck = stage(&report);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(memcheck["outcome"], "inconclusive", "{memcheck}\n{stderr}");
    assert!(
        memcheck["reason"]
            .as_str()
            .unwrap()
            .contains("rank 1: left no memcheck output"),
        "{memcheck}"
    );
    assert_ne!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn a_rank_missing_where_the_gpu_sampler_saw_no_process_still_keeps_the_stage_from_clean() {
    // The sampler saw no GPU process: the world was taken for the ranks
    // that left files, and rank 1, never checked, left the stage CLEAN. The
    // workers' own WORLD_SIZE and the launcher's --nproc_per_node=2 say two.
    let tmp = tempfile::tempdir().unwrap();
    let step = "multi/ddp_step/ranks-memcheck";
    let (out_dir, out) = run_per_rank_seen(tmp.path(), &[(0, step)], Some("0"), false);
    assert_memcheck_inconclusive(&out_dir, &out, "rank 1: left no memcheck output");
    assert!(out_dir.join("memcheck/rank-sanitizer.expected").is_file());
    assert!(out_dir.join("memcheck/memcheck.rank0.world").is_file());
}

#[test]
fn rank_files_a_launcher_wrote_itself_do_not_vouch_for_the_rank() {
    // Rank 1 never ran under its tool; the launcher left files in its name
    // (an exit status of 0 without the stage's nonce). Before, they stood
    // for rank 1 and the stage passed.
    let tmp = tempfile::tempdir().unwrap();
    let step = "multi/ddp_step/ranks-memcheck";
    let (out_dir, out) = run_per_rank_with(
        tmp.path(),
        &[(0, step)],
        Some("0"),
        true,
        &[("FAKE_FORGE_RANK1", "1")],
    );
    assert!(out_dir.join("memcheck/memcheck.rank1.exit").is_file());
    assert_memcheck_inconclusive(
        &out_dir,
        &out,
        "rank 1: its exit file (memcheck.rank1.exit) was not written by this run's script",
    );
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn ranks_that_ended_clean_under_a_launcher_that_failed_are_not_a_clean_stage() {
    // Found by the gate's property test: torchrun exited 1 (or died of a
    // signal) under the stage while both ranks' memcheck ended clean, and
    // the stage was clean; the plain run's torchrun exited 0.
    let tmp = tempfile::tempdir().unwrap();
    let (out_dir, out) =
        run_per_rank_with(tmp.path(), &[], None, true, &[("FAKE_LAUNCHER_EXIT", "1")]);
    assert_memcheck_inconclusive(
        &out_dir,
        &out,
        "torchrun exited 1 after its ranks' memcheck ended clean",
    );
    assert_eq!(out.status.code(), Some(3));
}

/// The memcheck stage of the run in `out_dir`, judged again, which must be
/// inconclusive for the reason `why` names; the run did not exit 0.
fn assert_memcheck_inconclusive(
    out_dir: &Path,
    out: &std::process::Output,
    why: &str,
) -> serde_json::Value {
    let report = crate::helpers::judged(out_dir);
    let memcheck = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "memcheck")
        .cloned()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(memcheck["outcome"], "inconclusive", "{memcheck}\n{stderr}");
    assert!(
        memcheck["reason"].as_str().unwrap().contains(why),
        "{memcheck}"
    );
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    memcheck
}

#[test]
fn a_correct_fsdp_step_is_clean_though_ncu_names_its_copy_out_kernel_without_aten() {
    // Two H200s: the coalescing check held FSDP's all-gather copy-out
    // (`detail::split_with_sizes_copy_out_...`, launched from
    // torch/distributed/fsdp) to the user's thresholds: FAILED, exit 1.
    let report = root().join("docs/examples/multi/fsdp_step.report.json");
    let out = run(cudawatch()
        .args(["report", "--format", "json"])
        .arg(&report));
    let judged = json(&out);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let item = crate::helpers::checklist_item(&judged, "coalescing_within_thresholds");
    assert_eq!(item["status"], "pass", "{item}");
    let copy_out = judged["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["kernel"]
                .to_string()
                .contains("split_with_sizes_copy_out")
        })
        .expect("the copy-out's site");
    assert_eq!(copy_out["owner"]["component"], "PyTorch", "{copy_out}");
}
