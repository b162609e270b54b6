//! Tool stages at once after the plain run (issue 23): the report is the
//! one a sequential run (`-j 1`) writes, a stage that ran out of GPU memory
//! beside others runs again alone, and a program that needs most of the
//! GPU gets its stages one at a time. Fakes replay real captures; a fake
//! nvidia-smi answers the memory queries.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::helpers::{read_json, root, run, sample};
use crate::run::fake_run;

pub(crate) const STAGES: &str = "plain,memcheck,racecheck,initcheck,synccheck";

/// The report as a user compares two runs: times, sampled memory, the
/// GPU each stage was pinned to and the machine's state before the run
/// differ between runs, nothing else may.
pub(crate) fn comparable(dir: &Path) -> Value {
    let mut report = read_json(&dir.join("report.json"));
    // The machine as doctor saw it before the run (which processes held
    // GPU memory then) is not the run's result.
    report.as_object_mut().unwrap().remove("environment");
    for stage in report["stages"].as_array_mut().unwrap() {
        let stage = stage.as_object_mut().unwrap();
        stage.remove("seconds");
        stage.remove("gpu_memory_mib");
        // Where a stage ran, and the free port its rendezvous got
        // (`supervisor::rendezvous`), differ from run to run; that a tool
        // stage has its own port does not.
        let env = stage["env"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| !e.as_str().unwrap().starts_with("CUDA_VISIBLE_DEVICES="))
            .map(|e| {
                let e = e.as_str().unwrap();
                match e.split_once('=') {
                    Some((key @ ("MASTER_PORT" | "PET_MASTER_PORT"), _)) => {
                        Value::String(format!("{key}=PORT"))
                    }
                    _ => Value::String(e.to_string()),
                }
            })
            .collect();
        stage.insert("env".into(), Value::Array(env));
    }
    let text = serde_json::to_string(&report)
        .unwrap()
        .replace(dir.to_str().unwrap(), "RUN");
    serde_json::from_str(&without_run_tags(&text)).unwrap()
}

/// The text with each run's own memory marker (`sampled_run_of`) made the
/// same.
fn without_run_tags(text: &str) -> String {
    const MARKER: &str = "cudawatch-test-holds-gpu-memory-";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARKER) {
        out.push_str(&rest[..at + MARKER.len()]);
        rest =
            rest[at + MARKER.len()..].trim_start_matches(|c: char| c.is_ascii_digit() || c == 'x');
        out.push_str("TAG");
    }
    out.push_str(rest);
    out
}

pub(crate) fn schedule(dir: &Path) -> String {
    read_json(&dir.join("run.json"))["schedule"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn stages_at_once_give_the_report_of_one_stage_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let report_of = |name: &str, extra: &[&str]| -> (Value, String) {
        let dir = tmp.path().join(name);
        let o = run(fake_run("oob_write", &dir, STAGES, extra));
        assert_eq!(o.code, 1, "{}", o.stderr);
        (comparable(&dir), o.stderr)
    };
    let (sequential, _) = report_of("seq", &["-j", "1"]);
    let (at_once, stderr) = report_of("par", &["-j", "4"]);
    assert_eq!(sequential, at_once);
    assert!(
        stderr.contains("note: 4 stages at once"),
        "the user is told how the stages ran: {stderr}"
    );
    assert!(
        schedule(&tmp.path().join("seq")).is_empty(),
        "-j 1 measures nothing"
    );
    assert!(schedule(&tmp.path().join("par")).starts_with("4 at once"));
    // Several GPUs: each stage sees every GPU the program was given (no
    // GPU here showed how many it uses), its own slot's first, so a
    // one-GPU program spreads and a rank per GPU still finds them all; the
    // report is the same.
    let (spread, _) = report_of("gpus", &["--gpus", "0,1"]);
    assert_eq!(sequential, spread);
    let visible: Vec<String> = ["memcheck", "racecheck", "initcheck", "synccheck"]
        .iter()
        .filter_map(|stage| {
            let record = read_json(&tmp.path().join(format!("gpus/{stage}/stage.json")));
            record["env"]
                .as_array()?
                .iter()
                .filter_map(|e| e.as_str()?.strip_prefix("CUDA_VISIBLE_DEVICES="))
                .map(str::to_string)
                .next()
        })
        .collect();
    assert!(
        visible.iter().all(|v| v == "0,1" || v == "1,0"),
        "every stage sees both GPUs: {visible:?}"
    );
    assert!(visible.iter().any(|v| v == "1,0"), "spread: {visible:?}");
    // The flag of the days before stages ran at once still works.
    let (old_flag, _) = report_of("old", &["--parallel-stages", "--gpus", "0,1"]);
    assert_eq!(sequential, old_flag);
}

/// `case` one stage at a time, then four at once with every fake
/// sanitizer that sees another running replaying `crowded_case` instead:
/// both exit `code` and have the same sites. The two run directories (in
/// `tmp`) and the crowded run's stderr.
fn crowded_beside_sequential(
    tmp: &Path,
    case: &str,
    crowded_case: &str,
    code: i32,
) -> (std::path::PathBuf, std::path::PathBuf, String) {
    let sequential = tmp.join("seq");
    let o = run(fake_run(case, &sequential, STAGES, &["-j", "1"]));
    assert_eq!(o.code, code, "{}", o.stderr);
    let crowded = tmp.join("par");
    let mut cmd = fake_run(case, &crowded, STAGES, &["-j", "4"]);
    cmd.env("FAKE_CROWDED", tmp.join("running"))
        .env("FAKE_CROWDED_CASE", sample(crowded_case));
    let o = run(cmd);
    assert_eq!(o.code, code, "{}", o.stderr);
    assert_eq!(
        comparable(&sequential).get("sites"),
        comparable(&crowded).get("sites")
    );
    (sequential, crowded, o.stderr)
}

#[test]
fn a_sanitizer_stage_whose_program_crashed_beside_others_runs_again_alone() {
    // Seen on the H100 with ten programs' stages on one machine: a
    // DataLoader step's initcheck crashed halfway beside the others
    // ("didn't terminate successfully", half its records) and the run was
    // inconclusive; alone, the stage ran to its end.
    let tmp = tempfile::tempdir().unwrap();
    // Beside another, each fake replays a real run whose program crashed
    // under the tool before its end.
    let (sequential, crowded, _) =
        crowded_beside_sequential(tmp.path(), "clean", "torch_index_oob", 0);
    let outcomes = |dir: &std::path::Path| -> Vec<String> {
        read_json(&dir.join("report.json"))["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| format!("{} {}", s["tool"], s["outcome"]))
            .collect()
    };
    assert_eq!(outcomes(&sequential), outcomes(&crowded));
    let notes = read_json(&crowded.join("memcheck/stage.json"))["notes"].to_string();
    assert!(
        notes.contains("the program crashed under the tool before the end of its work")
            && notes.contains("was run again alone"),
        "{notes}"
    );
}

#[test]
fn a_stage_that_ran_out_of_memory_beside_others_runs_again_alone() {
    let tmp = tempfile::tempdir().unwrap();
    // Run at once, every fake sanitizer that sees another running replays
    // a real run that ran out of GPU memory (another process held it).
    let (sequential, crowded, stderr) =
        crowded_beside_sequential(tmp.path(), "oob_write", "beyond/hog-640mib", 1);
    let report = read_json(&crowded.join("report.json"));
    for stage in report["stages"].as_array().unwrap() {
        let name = stage["tool"].as_str().unwrap();
        let seq = read_json(&sequential.join("report.json"));
        let seq_stage = seq["stages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["tool"] == name)
            .unwrap()
            .clone();
        assert_eq!(stage["outcome"], seq_stage["outcome"], "{name}");
    }
    let memcheck = read_json(&crowded.join("memcheck/stage.json"));
    let notes = memcheck["notes"].to_string();
    assert!(
        notes.contains("ran out of GPU memory (it printed \\\"out of memory\\\"")
            && notes.contains("was run again alone; the first try is in crowded/memcheck"),
        "{notes}"
    );
    assert!(
        crowded.join("crowded/memcheck/stdout").exists(),
        "the first try is kept"
    );
    assert!(stderr.contains("[again, alone]"), "{stderr}");
}

/// `fake_run` with a plain run that lasts long enough to be sampled, and a
/// fake nvidia-smi on PATH saying the program holds `held` MiB of a GPU
/// with 79,000 MiB free.
pub(crate) fn sampled_run(dir: &Path, held: u64) -> Command {
    sampled_run_of("oob_write", STAGES, dir, held, Holder::Program, &[])
}

/// Which process of the program the fake nvidia-smi says holds the memory.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Holder {
    /// The program's own process.
    Program,
    /// A child it starts (as torchrun or a shell script around Python do).
    Child,
}

pub(crate) fn sampled_run_of(
    case: &str,
    stages: &str,
    dir: &Path,
    held: u64,
    holder: Holder,
    extra: &[&str],
) -> Command {
    let replay = sample(case);
    let cmd = fake_run(case, dir, stages, extra);
    // Each run's own marker: tests run at once, and the fake nvidia-smi
    // counts every process that names it as holding memory.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let tag = format!(
        "{}x{}",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let marker = format!("cudawatch-test-holds-gpu-memory-{tag}");
    // Replace the program: the same replay, after a pause, named by a marker.
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cut = args.iter().position(|a| a == "--").unwrap();
    let mut fresh = crate::helpers::cudawatch();
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => fresh.env(k, v),
            None => fresh.env_remove(k),
        };
    }
    // The child's command line names the marker; the program's spells it
    // so that it does not.
    let pause = match holder {
        Holder::Program => format!("sleep 1.5; : {marker}"),
        Holder::Child => {
            format!("sh -c \"sleep 1.5; : $(printf %s-%s cudawatch-test-holds gpu-memory-{tag})\"")
        }
    };
    fresh.args(&args[..cut]).args(["--", "sh", "-c"]).arg(format!(
        "{pause}; cat '{0}/plain.stdout'; cat '{0}/plain.stderr' >&2; exit $(cat '{0}/plain.exit')",
        replay.display()
    ));
    let path = format!(
        "{}:{}",
        root().join("tests/fakes").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    fresh
        .env("PATH", path)
        .env("FAKE_SMI_FREE", "0, GPU-b0fb79d7, 79000")
        .env("FAKE_SMI_HOLD", format!("{marker}={held}"));
    fresh
}

#[test]
fn ncu_follows_the_program_alone_unless_another_of_its_processes_used_the_gpu() {
    // Following every process made ncu 2.7 times slower on a DataLoader
    // step (forked workers that never touch the GPU); a program whose
    // child does the GPU work (torchrun, a shell script) must still be
    // followed into it.
    let tmp = tempfile::tempdir().unwrap();
    let targets = |holder: Holder| -> String {
        let dir = tmp.path().join(if holder == Holder::Program {
            "own"
        } else {
            "child"
        });
        let o = run(sampled_run_of(
            "coalescing",
            "plain,ncu",
            &dir,
            900,
            holder,
            &[],
        ));
        // The strided gather fails the coalescing check, whichever way.
        assert_eq!(o.code, 1, "{}", o.stderr);
        let ncu = read_json(&dir.join("ncu/stage.json"));
        let command: Vec<&str> = ncu["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let at = command
            .iter()
            .position(|a| *a == "--target-processes")
            .unwrap();
        // The stage's own section, written where the command says.
        let folder = command[command
            .iter()
            .position(|a| *a == "--section-folder")
            .unwrap()
            + 1];
        assert!(
            Path::new(folder).join("CoalescingSource.section").is_file(),
            "{folder}"
        );
        assert!(folder.starts_with(dir.to_str().unwrap()), "{folder}");
        let report = read_json(&dir.join("report.json"));
        let ncu_stage = report["stages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["tool"] == "ncu")
            .unwrap()
            .clone();
        assert_eq!(ncu_stage["outcome"], "findings", "{ncu_stage}");
        command[at + 1].to_string()
    };
    assert_eq!(targets(Holder::Program), "application-only");
    assert_eq!(targets(Holder::Child), "all");
}

#[test]
fn ncu_replays_the_whole_program_when_it_holds_too_much_of_the_gpu_for_a_copy() {
    // tests/gpu/beyond/most_memory.py holding 48 GiB of the H100: kernel
    // replay found no room for its copy of the program's memory, took 15 s
    // a launch and was stopped at 200 s; application replay gave the same
    // figures in 65 s. A small program keeps kernel replay (16 s against
    // 62 s).
    let tmp = tempfile::tempdir().unwrap();
    let replay = |held: u64| -> (bool, String) {
        let dir = tmp.path().join(held.to_string());
        let o = run(sampled_run_of(
            "coalescing",
            "plain,ncu",
            &dir,
            held,
            Holder::Program,
            &[],
        ));
        assert_eq!(
            o.code, 1,
            "the strided gather fails either way: {}",
            o.stderr
        );
        let command = read_json(&dir.join("ncu/stage.json"))["command"].to_string();
        let report = read_json(&dir.join("report.json"));
        let ncu = crate::run::stage(&report, "ncu").clone();
        assert_eq!(ncu["outcome"], "findings", "{ncu}");
        (
            command.contains(r#""--replay-mode","application""#),
            ncu["reason"].as_str().unwrap().to_string(),
        )
    };
    let (whole, reason) = replay(48_300);
    assert!(whole, "{reason}");
    assert!(
        reason.contains("the program ran once per replay pass"),
        "{reason}"
    );
    let (whole, reason) = replay(900);
    assert!(!whole, "{reason}");
    assert!(!reason.contains("replay pass"), "{reason}");
}

#[test]
fn a_program_that_needs_most_of_the_gpu_gets_its_stages_one_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big");
    let o = run(sampled_run(&big, 70_000));
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        schedule(&big)
            .starts_with("1 at once: one stage at a time: the plain run peaked at 68.4 GiB"),
        "{}",
        schedule(&big)
    );
    let small = tmp.path().join("small");
    let o = run(sampled_run(&small, 900));
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        schedule(&small).contains(
            ": the plain run peaked at 900.0 MiB, its stages need 1.5 GiB to 1.6 GiB each"
        ),
        "{}",
        schedule(&small)
    );
    assert_eq!(comparable(&big), comparable(&small));
}

#[test]
fn a_stage_that_could_not_listen_on_its_port_beside_others_runs_again_alone() {
    // A DDP program's rendezvous port, taken by another run of it: the
    // memcheck capture of tests/gpu/real/ddp_step.py with its port held
    // (EADDRINUSE, exit 255 before any CUDA call). Beside another stage,
    // each fake sanitizer replays it; alone, the program's own run.
    let tmp = tempfile::tempdir().unwrap();
    let (_, crowded, _) = crowded_beside_sequential(tmp.path(), "oob_write", "beyond/ddp_ports", 1);
    let notes = read_json(&crowded.join("memcheck/stage.json"))["notes"].to_string();
    assert!(
        notes.contains("could not listen on its port (it printed \\\"address already in use\\\"")
            && notes.contains("was run again alone"),
        "{notes}"
    );
}

#[test]
fn every_tool_stage_has_a_rendezvous_port_of_its_own_and_the_plain_run_the_users() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut cmd = fake_run("oob_write", &dir, STAGES, &["-j", "4"]);
    cmd.env("MASTER_PORT", "29512");
    let o = run(cmd);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let report = read_json(&dir.join("report.json"));
    let mut ports = Vec::new();
    for stage in report["stages"].as_array().unwrap() {
        let env: Vec<&str> = stage["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap())
            .collect();
        let value = |key: &str| {
            env.iter()
                .find_map(|e| e.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        };
        if stage["tool"] == "plain" {
            assert_eq!(value("MASTER_PORT"), None, "the user's own: {env:?}");
            continue;
        }
        let port = value("MASTER_PORT").unwrap_or_else(|| panic!("{env:?}"));
        assert_eq!(value("PET_MASTER_PORT").as_ref(), Some(&port), "{env:?}");
        assert_ne!(port, "29512");
        ports.push(port);
    }
    let distinct: std::collections::HashSet<&String> = ports.iter().collect();
    assert_eq!(distinct.len(), ports.len(), "{ports:?}");
}
