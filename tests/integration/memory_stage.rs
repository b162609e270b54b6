//! The memory stage end to end without a GPU: real `python3`, cudawatch's
//! real hook, and the fake torch's caching allocator
//! (tests/fakes/pytorch/torch/cuda/), which keeps each block's Python
//! stack as real torch does. The reader itself is tested on the H100
//! captures in parsers/tests/memory_captures.rs.

use std::path::PathBuf;

use crate::helpers::{Output, checklist_item, cudawatch, json, root, run, with_fake_torch};
use crate::run::stage;

struct Case {
    tmp: tempfile::TempDir,
    out: Output,
}

/// `cudawatch run --stages plain,memory -- python3 prog.py`, with the fake
/// torch and a user `sitecustomize` on PYTHONPATH.
fn memory_run(program: &str, env: &[(&str, &str)], format: &str) -> Case {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = with_fake_torch(tmp.path(), program);
    cmd.args([
        "--color",
        "never",
        "run",
        "--stages",
        "plain,memory",
        "--format",
        format,
    ])
    .arg("--out-dir")
    .arg(tmp.path().join("run"))
    .args(["--", "python3", "prog.py"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(cmd);
    Case { tmp, out }
}

impl Case {
    fn dir(&self) -> PathBuf {
        self.tmp.path().join("run")
    }
}

/// The guide's leak: every step keeps 2 MiB (its "loss with its graph").
const GROWS: &str = "import torch
opt = torch.optim.Optimizer()
losses = []
for step in range(9):
    losses.append(torch.cuda.fake_alloc(2 << 20))
    scratch = torch.cuda.fake_alloc(1 << 20)
    torch.cuda.fake_free(scratch)
    opt.step()
print('done')
";

#[test]
fn memory_that_grows_every_step_gates_at_the_line_that_keeps_it() {
    let case = memory_run(GROWS, &[], "json");
    assert_eq!(case.out.code, 1, "{}", case.out.stderr);
    let report = json(&case.out);
    let memory = stage(&report, "memory");
    assert_eq!(memory["outcome"], "findings", "{memory}");
    assert!(
        memory["reason"]
            .as_str()
            .unwrap()
            .contains("2.0 MiB a step")
    );
    let site = crate::helpers::site_of_kind(&report, "memory_growth");
    assert_eq!(site["location"]["line"], 5, "losses.append(...)");
    assert_eq!(report["memory"]["steps"].as_array().unwrap().len(), 9);
    assert_eq!(
        checklist_item(&report, "no_memory_growth")["status"],
        "fail"
    );
    // The user's own startup hook ran under cudawatch's, in both stages.
    for s in ["plain", "memory"] {
        assert!(
            case.tmp
                .path()
                .join(format!("user-sitecustomize-{s}"))
                .exists(),
            "{s}"
        );
    }
    // Nothing went into the user's tree but what the program itself wrote.
    let mut names: Vec<String> = std::fs::read_dir(case.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "prog.py",
            "run",
            "user-sitecustomize-memory",
            "user-sitecustomize-plain",
            "usersite"
        ]
    );
}

/// A batch that does not fit: the model (line 2) and the batch (line 3)
/// hold the memory when the activations (line 4) ask for more.
const OOM: &str = "import torch
weights = [torch.cuda.fake_alloc(300 << 20) for _ in range(2)]
batch = torch.cuda.fake_alloc(200 << 20)
activations = torch.cuda.fake_alloc(400 << 20)
";

#[test]
fn an_out_of_memory_error_says_what_held_the_memory_by_line() {
    let case = memory_run(OOM, &[], "json");
    assert_eq!(case.out.code, 1, "{}", case.out.stderr);
    let report = json(&case.out);
    let memory = stage(&report, "memory");
    assert!(
        memory["reason"]
            .as_str()
            .unwrap()
            .starts_with("out of memory at prog.py:4")
            || memory["reason"].as_str().unwrap().contains("prog.py:4"),
        "{memory}"
    );
    let oom = &report["memory"]["ooms"][0];
    assert_eq!(oom["request"], 400u64 << 20);
    assert_eq!(oom["held"][0]["location"]["line"], 2);
    assert_eq!(oom["held"][0]["bytes"], 600u64 << 20);
    assert_eq!(oom["held"][0]["blocks"], 2);
    assert_eq!(oom["held"][1]["location"]["line"], 3);
    // The terminal view says it in a few lines.
    let table = memory_run(OOM, &[], "table");
    assert!(
        table.out.stderr.contains("What held it, by your line:"),
        "{}",
        table.out.stderr
    );
    assert!(
        table.out.stderr.contains("600.0 MiB"),
        "{}",
        table.out.stderr
    );
    assert!(table.out.stderr.contains("(100%)"), "{}", table.out.stderr);
}

#[test]
fn a_steady_program_is_clean_with_its_peak_and_one_without_torch_is_not_applicable() {
    let steady = "import torch
opt = torch.optim.Optimizer()
for step in range(8):
    x = torch.cuda.fake_alloc(8 << 20)
    torch.cuda.fake_free(x)
    opt.step()
";
    let case = memory_run(steady, &[], "json");
    assert_eq!(case.out.code, 0, "{}", case.out.stderr);
    let report = json(&case.out);
    let memory = stage(&report, "memory");
    assert_eq!(memory["outcome"], "clean", "{memory}");
    let reason = memory["reason"].as_str().unwrap();
    assert!(
        reason.contains("peak 8.0 MiB allocated") && reason.contains("no growth over 8"),
        "{reason}"
    );
    assert_eq!(
        checklist_item(&report, "no_memory_growth")["status"],
        "pass"
    );

    let case = memory_run("print('no torch here')\n", &[], "json");
    let report = json(&case.out);
    let memory = stage(&report, "memory");
    assert_eq!(memory["outcome"], "skipped");
    assert!(
        memory["reason"]
            .as_str()
            .unwrap()
            .contains("never imported torch")
    );
    assert!(!case.dir().join("memory").join("steps.jsonl").exists());
}

/// Two ranks, as torch.multiprocessing.spawn starts them: rank 0 holds
/// 500 MiB, rank 1 100 MiB; with GROWS=1 rank 1 keeps 2 MiB a step.
const TWO_RANKS: &str = "import os, multiprocessing
import torch

def worker(rank, grows):
    os.environ['RANK'] = str(rank)
    opt = torch.optim.Optimizer()
    held = torch.cuda.fake_alloc((500 if rank == 0 else 100) << 20)
    kept = []
    for step in range(9):
        if grows and rank == 1:
            kept.append(torch.cuda.fake_alloc(2 << 20))
        opt.step()

if __name__ == '__main__':
    grows = os.environ.get('GROWS') == '1'
    spawn = multiprocessing.get_context('spawn')
    ranks = [spawn.Process(target=worker, args=(r, grows)) for r in range(2)]
    for p in ranks:
        p.start()
    for p in ranks:
        p.join()
    print('done')
";

#[test]
fn each_rank_of_a_multi_process_program_is_judged_on_its_own_steps() {
    // Before: both ranks appended to one steps.jsonl, and the two series,
    // interleaved, fell and rose by turns: rank 1's leak came out CLEAN,
    // "no growth over 9 optimizer steps".
    let case = memory_run(TWO_RANKS, &[("GROWS", "1")], "json");
    assert_eq!(case.out.code, 1, "{}", case.out.stderr);
    let report = json(&case.out);
    let memory = stage(&report, "memory");
    let reason = memory["reason"].as_str().unwrap();
    assert!(
        reason.contains("grows by 2.0 MiB a step (steps 3-9 of rank 1 (pid "),
        "{reason}"
    );
    let site = crate::helpers::site_of_kind(&report, "memory_growth");
    assert_eq!(site["location"]["line"], 11, "kept.append(...) in rank 1");
    assert!(
        case.out.stderr.contains("2 processes used CUDA"),
        "{}",
        case.out.stderr
    );

    // Both steady: clean, and it says the peak is the highest of the two
    // and that growth was judged in each.
    let case = memory_run(TWO_RANKS, &[], "json");
    assert_eq!(case.out.code, 0, "{}", case.out.stderr);
    let report = json(&case.out);
    let reason = stage(&report, "memory")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("peak 500.0 MiB allocated")
            && reason.contains("(the highest of 2 processes' peaks)")
            && reason.contains("no growth over 9 optimizer steps in each of 2 processes"),
        "{reason}"
    );
    let processes = report["memory"]["processes"].as_array().unwrap();
    let mut ranks: Vec<u64> = processes
        .iter()
        .map(|p| p["rank"].as_u64().unwrap())
        .collect();
    ranks.sort();
    assert_eq!(ranks, [0, 1]);
    // The account at the peak is rank 0's, whichever rank exited last.
    assert_eq!(report["memory"]["peak"]["allocated"], 500u64 << 20);
}

#[test]
fn a_hook_turned_off_or_refused_by_torch_is_inconclusive_never_clean() {
    let case = memory_run(GROWS, &[("CUDAWATCH_NO_HOOK", "1")], "json");
    let report = json(&case.out);
    let memory = stage(&report, "memory");
    assert_eq!(memory["outcome"], "inconclusive", "{memory}");
    assert_eq!(case.out.code, 3, "{}", case.out.stderr);
    // A torch without allocator history (too old): the hook says why.
    let case = memory_run(
        "import torch\ndel torch.cuda.memory._record_memory_history\ntorch.cuda.init()\n",
        &[],
        "json",
    );
    let report = json(&case.out);
    let memory = stage(&report, "memory");
    assert_eq!(memory["outcome"], "inconclusive", "{memory}");
    assert!(
        memory["reason"]
            .as_str()
            .unwrap()
            .contains("_record_memory_history"),
        "{memory}"
    );
}

/// Halves its batch when it runs out of memory, as the checklist asks.
const RECOVERS: &str = "import torch
batch = 100
while True:
    try:
        x = torch.cuda.fake_alloc(batch << 20)
        break
    except torch.OutOfMemoryError:
        batch //= 2
print('done at batch', batch)
";

/// The same without a recovery path.
const FIXED_BATCH: &str = "import torch
x = torch.cuda.fake_alloc(100 << 20)
print('done')
";

fn recovery_run(program: &str, extra: &[&str]) -> (Output, serde_json::Value) {
    staged_run(program, "plain,memory,oom-recovery", extra)
}

/// `cudawatch run --stages STAGES EXTRA -- python3 prog.py` with the fake torch.
fn staged_run(program: &str, stages: &str, extra: &[&str]) -> (Output, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("prog.py"), program).unwrap();
    let mut cmd = cudawatch();
    cmd.current_dir(tmp.path())
        .env("PYTHONPATH", root().join("tests/fakes/pytorch"))
        .args(["run", "--stages", stages, "--format", "json"])
        .args(extra)
        .arg("--out-dir")
        .arg(tmp.path().join("run"))
        .args(["--", "python3", "prog.py"]);
    let out = run(cmd);
    let report = json(&out);
    (out, report)
}

#[test]
fn the_oom_recovery_check_caps_memory_below_the_peak_and_says_whether_the_program_recovered() {
    // Peak 100 MiB in the memory stage; capped to 60 MiB, the program
    // runs out, halves its batch and finishes.
    let (out, report) = recovery_run(RECOVERS, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let recovery = stage(&report, "oom-recovery");
    assert_eq!(recovery["outcome"], "clean", "{recovery}");
    let reason = recovery["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "recovered: ran out of memory 1 time under a cap of 60.0 MiB (60% of the peak 100.0 MiB"
        ),
        "{reason}"
    );
    assert_eq!(checklist_item(&report, "oom_recovery")["status"], "pass");

    // Without a recovery path: said, at the line that asked, but it gates
    // only when asked.
    let (out, report) = recovery_run(FIXED_BATCH, &[]);
    assert_eq!(out.code, 0, "not gating by default: {}", out.stderr);
    let site = crate::helpers::site_of_kind(&report, "oom_not_recovered");
    assert_eq!(site["location"]["line"], 2);
    assert_eq!(site["severity"], "warning");
    let item = checklist_item(&report, "oom_recovery");
    assert_eq!(item["status"], "skipped");
    assert!(
        item["evidence"]
            .as_str()
            .unwrap()
            .contains("--gate-oom-recovery"),
        "{item}"
    );
    let (out, report) = recovery_run(FIXED_BATCH, &["--gate-oom-recovery"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(checklist_item(&report, "oom_recovery")["status"], "fail");
}

#[test]
fn the_oom_recovery_check_without_the_memory_stage_is_inconclusive() {
    let (out, report) = staged_run(FIXED_BATCH, "plain,oom-recovery", &[]);
    let recovery = stage(&report, "oom-recovery");
    assert_eq!(recovery["outcome"], "inconclusive", "{recovery}");
    assert!(
        recovery["reason"]
            .as_str()
            .unwrap()
            .contains("needs the memory stage")
    );
    assert_eq!(out.code, 3);
}

#[test]
fn another_process_holding_memory_is_named_by_pid_and_executable_never_its_arguments() {
    // PyTorch's OOM message names the other process by PID only; the run
    // reads its executable's name while it still runs, never its command
    // line (`--hf-token=...` of another user's job). Here "another job" is
    // a sleep started with a secret as its name.
    let mut other = std::process::Command::new("bash")
        .args(["-c", "exec -a 'job --hf-token=SECRET' sleep 30"])
        .spawn()
        .unwrap();
    let program = format!(
        "import sys, torch
print('Process {} has 77.17 GiB memory in use.', file=sys.stderr)
torch.cuda.fake_alloc(2 << 30)
",
        other.id()
    );
    let (out, report) = staged_run(&program, "plain,memory", &[]);
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(out.code, 1, "{}", out.stderr);
    let named = &report["memory"]["ooms"][0]["other_processes"][0];
    assert_eq!(named["pid"], other.id());
    assert_eq!(named["command"], "sleep", "{named}");
    assert!(!report.to_string().contains("SECRET"), "{report}");
}

#[test]
fn an_oom_message_naming_every_process_lists_ten_and_counts_the_rest() {
    // Before: a message naming 65,535 processes printed as many lines.
    let program = "import sys, torch
for pid in range(100000, 100050):
    print(f'Process {pid} has 1.00 GiB memory in use.', file=sys.stderr)
torch.cuda.fake_alloc(2 << 30)
";
    let (out, report) = staged_run(program, "plain,memory", &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        report["memory"]["ooms"][0]["other_processes"]
            .as_array()
            .map(Vec::len),
        Some(50)
    );
    let listed = out.stderr.matches("Another process held").count();
    assert_eq!(listed, 10, "{}", out.stderr);
    assert!(
        out.stderr.contains("and 40 more processes held 40.0 GiB"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_memory_account_is_in_the_markdown_and_html_reports_too() {
    let tmp = tempfile::tempdir().unwrap();
    let (md, html) = (tmp.path().join("r.md"), tmp.path().join("r.html"));
    let (_, report) = staged_run(
        OOM,
        "plain,memory",
        &[
            "--report",
            &format!("markdown={}", md.display()),
            "--report",
            &format!("html={}", html.display()),
        ],
    );
    assert_eq!(
        report["memory"]["ooms"][0]["held"][0]["bytes"],
        600u64 << 20
    );
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.contains("### GPU memory") && md.contains("    What held it, by your line:"),
        "{md}"
    );
    let html = std::fs::read_to_string(html).unwrap();
    assert!(
        html.contains("<section id=\"memory\">") && html.contains("600.0 MiB"),
        "{html}"
    );
}

#[test]
fn an_oom_seen_only_by_the_memory_stage_gates_once() {
    // Without the plain run, the memory stage's own OOM is the finding:
    // never CLEAN. With it, the plain run's finding stands alone.
    let (out, report) = staged_run(OOM, "memory", &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let site = crate::helpers::site_of_kind(&report, "out_of_memory");
    assert_eq!(site["tool"], "memory");
    assert_eq!(site["location"]["line"], 4);
    let (_, report) = staged_run(OOM, "plain,memory", &[]);
    let ooms = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "out_of_memory")
        .count();
    assert_eq!(ooms, 1, "{report}");
}

#[test]
fn gating_on_oom_recovery_without_its_stage_is_refused_not_passed_in_silence() {
    // It was CLEAN, exit 0: a gate on a check that never ran.
    let out = run(crate::helpers::cudawatch().args([
        "run",
        "--stages",
        "plain,memory",
        "--gate-oom-recovery",
        "--",
        "python3",
        "prog.py",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "--gate-oom-recovery gates the oom-recovery stage, which this run's stages leave out"
        ),
        "{}",
        out.stderr
    );
}
