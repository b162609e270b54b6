//! Tool stages started beside the plain run (issue 23): on a small program
//! they finish with the report a sequential run gives; the plain run's
//! findings then correct them: a stage whose command it changes starts
//! again, a program that fills the GPU stops them, and a plain run that
//! ran out of memory beside them runs again alone. Fakes replay real
//! captures; a fake nvidia-smi answers the memory queries.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::concurrency::{Holder, STAGES, comparable, sampled_run_of, schedule};
use crate::helpers::{read_json, run};

/// The out-of-bounds write's replay, its program holding `held` MiB, at
/// most `jobs` stages at once.
fn oob_write_run(dir: &Path, held: u64, jobs: &str) -> Command {
    sampled_run_of(
        "oob_write",
        STAGES,
        dir,
        held,
        Holder::Program,
        &["-j", jobs],
    )
}

/// `cmd` (a `sampled_run_of`) with its program's shell script changed.
fn with_script(cmd: &Command, change: impl Fn(&str) -> String) -> Command {
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cut = args.iter().position(|a| a == "--").unwrap();
    let script = change(args.last().unwrap());
    let mut fresh = crate::helpers::cudawatch();
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => fresh.env(k, v),
            None => fresh.env_remove(k),
        };
    }
    fresh.args(&args[..cut]).args(["--", "sh", "-c", &script]);
    fresh
}

/// Each stage's tool and outcome, and each site's id and count: what a
/// user compares between two runs of one program.
fn findings(dir: &Path) -> (Vec<String>, serde_json::Value) {
    let report = comparable(dir);
    let outcomes = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{} {}", s["tool"], s["outcome"]))
        .collect();
    (outcomes, report["sites"].clone())
}

#[test]
fn stages_started_beside_the_plain_run_report_what_one_at_a_time_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let sequential = tmp.path().join("seq");
    let o = run(oob_write_run(&sequential, 900, "1"));
    assert_eq!(o.code, 1, "{}", o.stderr);
    let early = tmp.path().join("early");
    let o = run(oob_write_run(&early, 900, "5"));
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(comparable(&sequential), comparable(&early));
    assert!(
        o.stderr.contains("[beside the plain run]"),
        "the user sees which stages started with the plain run: {}",
        o.stderr
    );
    let why = schedule(&early);
    assert!(
        why.contains("4 had started beside the plain run") && !why.contains("started again"),
        "{why}"
    );
    // Started before the plain run's time was known, each stage still ran
    // under the limit that time gives (40 times it, at least 120 s), not
    // the hour a stage gets when there is no plain run to measure.
    let memcheck = read_json(&early.join("memcheck/stage.json"));
    assert_eq!(memcheck["timeout_seconds"], 120.0, "{memcheck}");
}

#[test]
fn ncu_started_beside_the_plain_run_starts_again_when_a_child_of_the_program_used_the_gpu() {
    // ncu starts following the program alone (the common case, 2.7 times
    // faster on a DataLoader step); when the plain run shows that a child
    // did the GPU work, that run is thrown away and ncu follows them all.
    let tmp = tempfile::tempdir().unwrap();
    let ncu_of = |holder: Holder, name: &str| -> (String, String) {
        let dir = tmp.path().join(name);
        let o = run(sampled_run_of(
            "coalescing",
            "plain,memcheck,ncu",
            &dir,
            900,
            holder,
            &["-j", "3"],
        ));
        assert_eq!(o.code, 1, "{}", o.stderr);
        let command = read_json(&dir.join("ncu/stage.json"))["command"].to_string();
        let report = read_json(&dir.join("report.json"));
        assert_eq!(
            crate::run::stage(&report, "ncu")["outcome"],
            "findings",
            "{report}"
        );
        (command, schedule(&dir))
    };
    let (command, why) = ncu_of(Holder::Program, "own");
    assert!(
        command.contains(r#""--target-processes","application-only""#),
        "{command}"
    );
    assert!(!why.contains("started again"), "{why}");
    let (command, why) = ncu_of(Holder::Child, "child");
    assert!(
        command.contains(r#""--target-processes","all""#),
        "{command}"
    );
    assert!(why.contains("1 kept (ncu started again)"), "{why}");
}

#[test]
fn a_program_that_fills_the_gpu_stops_the_stages_beside_its_plain_run() {
    // 70,000 of 79,000 MiB: the stages beside the plain run are stopped as
    // soon as the free memory falls, and then run one at a time.
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big");
    let mut cmd = oob_write_run(&big, 70_000, "5");
    // Each stage long enough to be running when the memory is read.
    cmd.env("FAKE_SLEEP", "3");
    let o = run(cmd);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let why = schedule(&big);
    assert!(
        why.starts_with("1 at once: one stage at a time: the plain run peaked at 68.4 GiB")
            && why.ends_with("4 had started beside the plain run, 0 kept (memcheck, racecheck, initcheck, synccheck started again)"),
        "{why}"
    );
    let small = tmp.path().join("small");
    let o = run(oob_write_run(&small, 900, "5"));
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(findings(&big), findings(&small));
    // What was stopped left nothing behind: each stage's folder is its
    // one run's.
    assert!(!big.join("crowded").exists());
}

#[test]
fn a_plain_run_that_ran_out_of_memory_beside_the_stages_runs_again_alone() {
    // The plain run must show the program's own failure: an out-of-memory
    // error that the stages beside it caused is not the program's (and
    // would send the user to the oom stages for nothing).
    let tmp = tempfile::tempdir().unwrap();
    let sequential = tmp.path().join("seq");
    let o = run(oob_write_run(&sequential, 900, "1"));
    assert_eq!(o.code, 1, "{}", o.stderr);
    let crowded = tmp.path().join("crowded-plain");
    let cmd = oob_write_run(&crowded, 900, "5");
    // The program runs out of memory while a fake sanitizer of this run
    // runs beside it (the bracket keeps the pattern from naming the
    // program itself, the start from naming cudawatch); the fakes run long
    // enough to be seen.
    let pattern = format!(
        "^bash .*/[c]ompute-sanitizer --tool .*{}",
        crowded.display()
    );
    let mut fresh = with_script(&cmd, |script| {
        script.replacen(
            "sleep 1.5;",
            &format!(
                "sleep 1.5; if pgrep -f '{pattern}' >/dev/null; then echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB' >&2; exit 1; fi;"
            ),
            1,
        )
    });
    fresh.env("FAKE_SLEEP", "3");
    let o = run(fresh);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(findings(&sequential), findings(&crowded));
    let plain = read_json(&crowded.join("plain/stage.json"));
    let notes = plain["notes"].to_string();
    assert!(
        notes.contains("the plain run ran out of GPU memory")
            && notes.contains("with tool stages beside it, and was run again alone; the first try is in crowded/plain"),
        "{notes}"
    );
    let why = schedule(&crowded);
    assert!(
        why.ends_with("4 had started beside the plain run, stopped when it ran out of memory"),
        "{why}"
    );
    let first = std::fs::read_to_string(crowded.join("crowded/plain/stderr")).unwrap();
    assert!(
        first.contains("CUDA out of memory"),
        "the first try is kept: {first}"
    );
    assert!(o.stderr.contains("[again, alone]"), "{}", o.stderr);
}

#[test]
fn a_plain_run_that_hit_its_own_memory_cap_beside_the_stages_is_not_run_again() {
    // PyTorch says how much of the GPU was free when the allocation failed:
    // 72 GiB free means the program's own cap (set_per_process_memory_
    // fraction) stopped it, not the stages beside it. Running it again
    // alone cost a GPT-2 step 30 s on the H100 and said nothing new.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("capped");
    let cmd = oob_write_run(&dir, 900, "5");
    let pattern = format!("^bash .*/[c]ompute-sanitizer --tool .*{}", dir.display());
    let mut capped = with_script(&cmd, |script| {
        script.replacen(
            "sleep 1.5;",
            &format!(
                "sleep 1.5; if pgrep -f '{pattern}' >/dev/null; then echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 36.00 MiB. GPU 0 has a total capacity of 79.18 GiB of which 72.18 GiB is free. 6.33 GiB allowed;' >&2; exit 1; fi;"
            ),
            1,
        )
    });
    capped.env("FAKE_SLEEP", "3");
    let o = run(capped);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(!o.stderr.contains("[again, alone]"), "{}", o.stderr);
    assert!(!dir.join("crowded").exists());
    let plain = read_json(&dir.join("plain/stage.json"));
    assert!(plain["earlier_tries"].is_null(), "{plain}");
    assert!(
        o.stderr
            .contains("FINDINGS: root cause: plain out_of_memory"),
        "{}",
        o.stderr
    );
}

#[test]
fn ctrl_c_during_the_plain_run_reaches_the_stages_beside_it_and_the_report_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("fake.log");
    let dir = tmp.path().join("run");
    let cmd = sampled_run_of(
        "oob_write",
        "plain,memcheck,racecheck,initcheck",
        &dir,
        900,
        Holder::Program,
        // A grace the fakes' traps meet under a loaded CI machine: bash runs
        // its SIGINT trap only once the command in hand ends, and with half
        // a second one fake was killed first (seen in .ci/run, 1 run in 12
        // under load here).
        &["-j", "3", "--grace", "10"],
    );
    // A plain run long enough to be interrupted while the two stages
    // beside it hang.
    let mut cmd = with_script(&cmd, |script| script.replacen("sleep 1.5;", "sleep 30;", 1));
    cmd.env("FAKE_MODE", "hang").env("FAKE_LOG", &log);
    let child = crate::run::start_and_wait_for(&mut cmd, &log, "racecheck");
    crate::run::wait_until("both stages running", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.matches("pid ").count() == 2)
    });
    let started = Instant::now();
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = crate::helpers::finish(child);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "stopped, not waited out"
    );
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert_eq!(
        crate::run::sigints_in(&log),
        2,
        "SIGINT forwarded to both stages beside the plain run: {}\n{}",
        std::fs::read_to_string(&log).unwrap_or_default(),
        out.stderr
    );
    let report = read_json(&dir.join("report.json"));
    let outcome = |tool: &str| crate::run::stage(&report, tool)["outcome"].clone();
    assert_eq!(outcome("plain"), "inconclusive", "{report}");
    assert_eq!(outcome("memcheck"), "inconclusive");
    assert_eq!(outcome("racecheck"), "inconclusive");
    assert_eq!(
        outcome("initcheck"),
        "skipped",
        "nothing starts after Ctrl-C"
    );
}
