//! `--steps N`: a training script that runs for hours is checked on its
//! first N optimizer steps, in every stage, and the report says so. Real
//! `python3`, cudawatch's real hook, the fake torch (tests/fakes/pytorch/)
//! whose optimizer calls the global post-step hooks as torch's does.

use crate::helpers::{cudawatch, json, read_json, root, run, sample, with_fake_torch};
use crate::run::stage;

/// A training loop of 500 steps that says each one; the last line only a
/// run to its end prints.
const TRAINING: &str = "import torch
opt = torch.optim.Optimizer()
torch.cuda.init()
try:
    for step in range(1, 501):
        print(f'step {step}', flush=True)
        opt.step()
finally:
    print('cleanup ran', flush=True)
print('trained 500 steps')
";

#[test]
fn every_stage_ends_the_program_after_the_steps_asked_and_the_report_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(with_fake_torch(tmp.path(), TRAINING)
        .env("FAKE_CASE", sample("clean"))
        .arg("--color")
        .arg("never")
        .args(["run", "--stages", "plain,memcheck,csan", "--steps", "3"])
        .args(["--format", "json", "--out-dir"])
        .arg(&dir)
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .args(["--", "python3", "prog.py"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    // The programs cudawatch really ran (the plain run, CSAN's) stopped at
    // step 3, their own cleanup done, and each stage says where it ended.
    for tool in ["plain", "csan"] {
        let stdout = std::fs::read_to_string(dir.join(tool).join("stdout")).unwrap();
        assert_eq!(stdout, "step 1\nstep 2\nstep 3\ncleanup ran\n", "{tool}");
        let s = stage(&report, tool);
        assert_eq!(s["outcome"], "clean", "{s}");
        assert!(
            s["reason"]
                .as_str()
                .unwrap()
                .ends_with("the program was ended after its first 3 optimizer steps (--steps)"),
            "{s}"
        );
    }
    // The sanitizer's program gets the same order (the fake does not run
    // it: its command and environment say it).
    let memcheck = read_json(&dir.join("memcheck/stage.json"));
    let env = memcheck["env"].to_string();
    assert!(
        env.contains("CUDAWATCH_STOP_AFTER_STEPS=3") && env.contains("/hook"),
        "{env}"
    );
    // The tool stages keep cuDNN's benchmark mode off (the hook's own test
    // is in csan_stage.rs); the stages that run the program as it runs for
    // real do not.
    assert!(env.contains("CUDAWATCH_CUDNN_BENCHMARK_OFF=1"), "{env}");
    let csan = read_json(&dir.join("csan/stage.json"))["env"].to_string();
    assert!(!csan.contains("CUDNN_BENCHMARK_OFF"), "{csan}");
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("up to its optimizer step 3") && notes.contains("--steps"),
        "{notes}"
    );
    // A note, not a warning: the verdict stays a plain CLEAN.
    assert!(
        out.stderr.contains("CLEAN: no errors found") && !out.stderr.contains("warning (see"),
        "{}",
        out.stderr
    );
}

#[test]
fn steps_leave_a_program_that_is_not_python_alone_and_zero_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(cudawatch()
        .args([
            "run", "--stages", "plain", "--steps", "2", "--format", "json",
        ])
        .arg("--out-dir")
        .arg(&dir)
        .args(["--", "sh", "-c", "echo done"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let plain = read_json(&dir.join("plain/stage.json"));
    assert!(
        !plain["env"]
            .to_string()
            .contains("CUDAWATCH_STOP_AFTER_STEPS"),
        "{plain}"
    );
    assert!(!json(&out)["notes"].to_string().contains("--steps"));
    let zero = run(cudawatch().args(["run", "--steps", "0", "--", "python3", "x.py"]));
    assert_eq!(zero.code, 2, "{}", zero.stderr);
    assert!(zero.stderr.contains("--steps"), "{}", zero.stderr);
}

/// An evaluation loop of 500 batches: a model (a module calling two
/// submodules) called once a batch, no optimizer. Batch 2's first call
/// raises inside a submodule and the program catches it and retries.
const INFERENCE: &str = "import torch

class Layer(torch.nn.Module):
    def forward(self, x):
        if x == 'bad':
            raise ValueError('bad batch')
        return x

class Model(torch.nn.Module):
    def __init__(self):
        self.a, self.b = Layer(), Layer()
    def forward(self, x):
        return self.b(self.a(x))

model = Model()
torch.cuda.init()
try:
    for batch in range(1, 501):
        if batch == 2:
            try:
                model('bad')
            except ValueError:
                print('bad batch skipped', flush=True)
        model(batch)
        print(f'batch {batch}', flush=True)
finally:
    print('cleanup ran', flush=True)
print('evaluated 500 batches')
";

#[test]
fn a_program_without_an_optimizer_ends_after_its_first_model_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(with_fake_torch(tmp.path(), INFERENCE)
        .arg("--color")
        .arg("never")
        .args(["run", "--stages", "plain,csan", "--steps", "3"])
        .args(["--format", "json", "--out-dir"])
        .arg(&dir)
        .args(["--", "python3", "prog.py"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    for tool in ["plain", "csan"] {
        // Three top-level calls, not the submodules' six; the call that
        // raised is the program's to handle and does not count.
        let stdout = std::fs::read_to_string(dir.join(tool).join("stdout")).unwrap();
        assert_eq!(
            stdout, "batch 1\nbad batch skipped\nbatch 2\ncleanup ran\n",
            "{tool}"
        );
        let s = stage(&report, tool);
        assert!(
            s["reason"].as_str().unwrap().ends_with(
                "the program, which builds no optimizer, was ended after its first 3 model calls (--steps)"
            ),
            "{s}"
        );
    }
    assert!(
        report["notes"].to_string().contains("its model call 3"),
        "{}",
        report["notes"]
    );
    // A training loop whose model is called before each step is counted in
    // optimizer steps alone.
    let training = "import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x
model, opt = Model(), torch.optim.Optimizer()
torch.cuda.init()
for step in range(1, 501):
    model(step)
    model(step)
    print(f'step {step}', flush=True)
    opt.step()
";
    let dir = tmp.path().join("training");
    let out = run(with_fake_torch(tmp.path(), training)
        .args(["run", "--stages", "plain", "--steps", "3", "--out-dir"])
        .arg(&dir)
        .args(["--", "python3", "prog.py"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stdout = std::fs::read_to_string(dir.join("plain").join("stdout")).unwrap();
    assert_eq!(stdout, "step 1\nstep 2\nstep 3\n");
}

#[test]
fn the_memory_stage_records_the_step_the_program_was_ended_at() {
    // The stop after step 3 came before the memory stage's own hook saw
    // it: "2 optimizer steps" (Hugging Face's Trainer with --steps 2 on
    // the H100: "1 optimizer step too few").
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(with_fake_torch(tmp.path(), TRAINING)
        .args(["run", "--stages", "plain,memory", "--steps", "3"])
        .args(["--format", "json", "--out-dir"])
        .arg(&dir)
        .args(["--", "python3", "prog.py"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let memory = stage(&json(&out), "memory").clone();
    assert!(
        memory["reason"]
            .as_str()
            .unwrap()
            .contains("3 optimizer steps too few to judge growth"),
        "{memory}"
    );
}

#[test]
fn the_note_says_so_when_no_stage_reached_the_steps_asked() {
    // (what, program, words the note must hold, words it must not)
    let rows = [
        (
            "a script of 2 steps, --steps 3",
            "import torch\nopt = torch.optim.Optimizer()\ntorch.cuda.init()\nfor _ in range(2):\n    opt.step()\n",
            "ended before its optimizer step 3",
            "was not checked",
        ),
        (
            "a program that never imports torch (JAX, CuPy)",
            "print('no torch here')\n",
            "never imported torch: every stage ran it to its end",
            "was not checked",
        ),
    ];
    for (what, program, says, never) in rows {
        let tmp = tempfile::tempdir().unwrap();
        let out = run(with_fake_torch(tmp.path(), program)
            .args(["run", "--stages", "plain,csan", "--steps", "3"])
            .args(["--format", "json", "--out-dir"])
            .arg(tmp.path().join("run"))
            .args(["--", "python3", "prog.py"]));
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
        let notes = json(&out)["notes"].to_string();
        assert!(
            notes.contains(says) && !notes.contains(never),
            "{what}: {notes}"
        );
    }
}
