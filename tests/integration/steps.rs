//! `--steps N`: a training script that runs for hours is checked on its
//! first N optimizer steps, in every stage, and the report says so. Real
//! `python3`, cudawatch's real hook, the fake torch (tests/fakes/pytorch/)
//! whose optimizer calls the global post-step hooks as torch's does.

use std::path::PathBuf;

use crate::helpers::{Output, cudawatch, json, read_json, root, run, sample, with_fake_torch};
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

/// `cudawatch run` of TRAINING with `stages` and `flags`, the fake
/// compute-sanitizer replaying a clean capture: the run directory and the
/// output.
fn training(tmp: &std::path::Path, stages: &str, flags: &[&str]) -> (PathBuf, Output) {
    program_run(tmp, TRAINING, "run", stages, flags)
}

/// The same for `program`, into `tmp/name`.
fn program_run(
    tmp: &std::path::Path,
    program: &str,
    name: &str,
    stages: &str,
    flags: &[&str],
) -> (PathBuf, Output) {
    let dir = tmp.join(name);
    let out = run(with_fake_torch(tmp, program)
        .env("FAKE_CASE", sample("clean"))
        .args(["--color", "never", "run", "--stages", stages])
        .args(flags)
        .args(["--format", "json", "--out-dir"])
        .arg(&dir)
        .arg("--compute-sanitizer")
        .arg(root().join("tests/fakes/compute-sanitizer"))
        .args(["--", "python3", "prog.py"]));
    (dir, out)
}

#[test]
fn every_stage_ends_the_program_after_the_steps_asked_and_the_report_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, out) = training(tmp.path(), "plain,memcheck,csan", &["--steps", "3"]);
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
fn steps_are_counted_per_optimizer_so_a_gans_generator_is_checked_too() {
    // A DCGAN loop steps the discriminator's optimizer, then runs the
    // generator's backward pass and steps its optimizer. Counted together,
    // the first step ended it before the generator's half had run once.
    let gan = "import torch
opt_d, opt_g = torch.optim.Optimizer(), torch.optim.Optimizer()
unused = torch.optim.Optimizer() if 'UNUSED' in __import__('os').environ else None
torch.cuda.init()
for step in range(1, 301):
    print(f'D {step}', flush=True)
    opt_d.step()
    print(f'G {step}', flush=True)
    opt_g.step()
";
    let tmp = tempfile::tempdir().unwrap();
    let (dir, out) = program_run(tmp.path(), gan, "gan", "plain,csan", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stdout = std::fs::read_to_string(dir.join("csan/stdout")).unwrap();
    assert_eq!(stdout, "D 1\nG 1\nD 2\nG 2\n");
    let report = json(&out);
    let csan = stage(&report, "csan");
    assert_eq!(csan["covered"]["optimizers"], 2, "{csan}");
    assert!(
        csan["reason"]
            .as_str()
            .unwrap()
            .contains("ended after its first 2 steps of each of its 2 optimizers"),
        "{csan}"
    );
    assert!(
        report["notes"]
            .to_string()
            .contains("csan: 2 steps of each of its 2 optimizers"),
        "{}",
        report["notes"]
    );
    // An optimizer built and never stepped (a later phase's) cannot keep
    // a stage running whole: 8 x 2 steps of another end it, and it says so.
    let (dir, out) = program_run(
        tmp.path(),
        &gan.replace("'UNUSED' in", "'PATH' in"),
        "unused",
        "plain,csan",
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stdout = std::fs::read_to_string(dir.join("csan/stdout")).unwrap();
    assert!(stdout.ends_with("D 16\n"), "{stdout}");
    let csan = stage(&json(&out), "csan").clone();
    assert!(
        csan["reason"]
            .as_str()
            .unwrap()
            .contains("its first 16 steps of one optimizer (1 other it built stepped fewer times)"),
        "{csan}"
    );
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

#[test]
fn by_default_the_tool_stages_check_a_loops_first_steps_and_the_plain_run_all_of_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, out) = training(tmp.path(), "plain,memcheck,csan,memory", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    // The plain run is the user's whole program: an error at step 400 is
    // still seen there.
    let plain = std::fs::read_to_string(dir.join("plain/stdout")).unwrap();
    assert!(
        plain.ends_with("step 500\ncleanup ran\ntrained 500 steps\n"),
        "{plain}"
    );
    assert!(stage(&report, "plain")["covered"].is_null());
    // CSAN ran two steps, the memory stage sixteen, each saying so, and
    // memcheck's program was told two.
    for (tool, steps) in [("csan", 2), ("memory", 16)] {
        let stdout = std::fs::read_to_string(dir.join(tool).join("stdout")).unwrap();
        assert!(
            stdout.ends_with(&format!("step {steps}\ncleanup ran\n")),
            "{tool}: {stdout}"
        );
        let s = stage(&report, tool);
        assert_eq!(s["covered"]["count"], steps, "{s}");
        assert_eq!(s["covered"]["by_default"], true, "{s}");
        assert!(
            s["reason"].as_str().unwrap().ends_with(&format!(
                "ended after its first {steps} optimizer steps (this stage's default for a loop; \
                 --whole-program runs every step)"
            )),
            "{s}"
        );
    }
    let env = read_json(&dir.join("memcheck/stage.json"))["env"].to_string();
    assert!(
        env.contains("CUDAWATCH_STOP_AFTER_STEPS=2")
            && env.contains("CUDAWATCH_STEPS_BY_DEFAULT=1"),
        "{env}"
    );
    // The note lists what each stage saw; the verdict says what it vouches for.
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("csan: 2 optimizer steps; memory: 16 optimizer steps")
            && notes.contains("the plain run ran the program to its end"),
        "{notes}"
    );
    assert!(
        out.stderr.contains(
            "the tool stages checked the loop's first steps and the plain run all of them"
        ),
        "{}",
        out.stderr
    );

    // --whole-program: every stage runs all 500 steps, and nothing says
    // otherwise.
    let dir = tmp.path().join("whole");
    let out = run(with_fake_torch(tmp.path(), TRAINING)
        .args([
            "run",
            "--stages",
            "plain,csan",
            "--whole-program",
            "--format",
            "json",
        ])
        .arg("--out-dir")
        .arg(&dir)
        .args(["--", "python3", "prog.py"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let csan = std::fs::read_to_string(dir.join("csan/stdout")).unwrap();
    assert!(csan.ends_with("trained 500 steps\n"), "{csan}");
    assert!(!json(&out)["notes"].to_string().contains("first steps"));
    // A program without a loop runs whole in every stage, with no note.
    let dir = tmp.path().join("no-loop");
    let out = run(with_fake_torch(
        tmp.path(),
        "import torch\ntorch.cuda.init()\nprint('done')\n",
    )
    .args([
        "run",
        "--stages",
        "plain,csan",
        "--format",
        "json",
        "--out-dir",
    ])
    .arg(&dir)
    .args(["--", "python3", "prog.py"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    assert!(stage(&report, "csan")["covered"].is_null());
    assert!(
        !report["notes"].to_string().contains("first steps"),
        "{}",
        report["notes"]
    );
}

#[test]
fn the_memory_stage_runs_to_an_out_of_memory_error_the_plain_run_met_past_its_steps() {
    // Memory grows 40 MiB a step until step 26 runs out of the fake GPU's
    // 1 GiB: past the memory stage's sixteen steps, which would never see
    // what held the memory then.
    let program = "import torch
opt = torch.optim.Optimizer()
torch.cuda.init()
kept = []
for step in range(1, 101):
    kept.append(torch.cuda.fake_alloc(40 << 20))
    print(f'step {step}', flush=True)
    opt.step()
";
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(with_fake_torch(tmp.path(), program)
        .args([
            "run",
            "--stages",
            "plain,memory",
            "--format",
            "json",
            "--out-dir",
        ])
        .arg(&dir)
        .args(["--", "python3", "prog.py"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = json(&out);
    let memory = stage(&report, "memory");
    assert!(memory["covered"].is_null(), "{memory}");
    assert!(
        memory["reason"].as_str().unwrap().contains("prog.py:6"),
        "{memory}"
    );
    assert_eq!(
        report["memory"]["ooms"][0]["held"][0]["location"]["line"],
        6
    );
    let env = read_json(&dir.join("memory/stage.json"))["env"].to_string();
    assert!(!env.contains("CUDAWATCH_STOP_AFTER_STEPS"), "{env}");
}

/// The fake compute-sanitizer at `path`, answering `--version` as `version`.
fn fake_sanitizer_answering(path: &std::path::Path, version: &str) {
    let fake = root().join("tests/fakes/compute-sanitizer");
    let script = format!(
        "#!/bin/sh\nFAKE_VERSION={version} exec {} \"$@\"\n",
        fake.display()
    );
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// `cmd` as `run --stages plain,memcheck,racecheck --format json` of the
/// clean training capture, the fake sanitizer answering as `version`.
fn three_stages<'a>(
    cmd: &'a mut std::process::Command,
    version: &str,
) -> &'a mut std::process::Command {
    stages_of(cmd, version, "plain,memcheck,racecheck")
}

/// `cmd` as `run --stages STAGES --format json` of the clean training
/// capture, the fake sanitizer answering as `version`.
fn stages_of<'a>(
    cmd: &'a mut std::process::Command,
    version: &str,
    stages: &str,
) -> &'a mut std::process::Command {
    cmd.env("FAKE_CASE", sample("torch_train_clean"))
        .env("FAKE_VERSION", version)
        .args(["run", "--stages", stages, "--format", "json"])
}

/// The racecheck stage's command and reason in a run of a training script
/// against the fake compute-sanitizer, with `args` and the fake answering
/// `--version` as `version`.
fn racecheck_of(version: &str, args: &[&str]) -> (String, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let fake = root().join("tests/fakes/compute-sanitizer");
    // A compute-sanitizer for racecheck alone: the same fake, answering
    // as 2026.4.
    let newer = tmp.path().join("compute-sanitizer-2026.4");
    fake_sanitizer_answering(&newer, "2026.4.0.0");
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("NEWER", &newer.display().to_string()))
        .collect();
    let out = run(
        three_stages(&mut with_fake_torch(tmp.path(), TRAINING), version)
            .args(&args)
            .arg("--compute-sanitizer")
            .arg(&fake)
            .arg("--out-dir")
            .arg(&dir)
            .args(["--", "python3", "prog.py"]),
    );
    let report = json(&out);
    let command = |tool: &str| stage(&report, tool)["command"].to_string();
    let reason = stage(&report, "racecheck")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    (command("racecheck"), command("memcheck"), reason)
}

#[test]
fn racecheck_leaves_library_kernels_out_with_a_sanitizer_that_survives_it_and_says_so() {
    let filter = "--kernel-name-exclude\",\"regex=(cudnn|cublas|cutlass|xmma|nvjet";
    // 2026.4: library kernels left out, and the reason says why that hides
    // nothing that gates.
    let (racecheck, memcheck, reason) = racecheck_of("2026.4.0.0", &[]);
    assert!(racecheck.contains(filter), "{racecheck}");
    assert!(!memcheck.contains("--kernel-name-exclude"), "{memcheck}");
    assert!(
        reason.contains("library kernels (cuDNN, cuBLAS, CUTLASS, NCCL) and PyTorch's (ATen) left out: a race inside one is their own code and never gates"),
        "{reason}"
    );
    // 2025.3.1 crashes the program when they are left out: every kernel.
    let (racecheck, _, reason) = racecheck_of("2025.3.1.0", &[]);
    assert!(!racecheck.contains("--kernel-name-exclude"), "{racecheck}");
    assert!(!reason.contains("left out"), "{reason}");
    // --gate-scope all gates on library races: racecheck analyses them.
    let (racecheck, _, _) = racecheck_of("2026.4.0.0", &["--gate-scope", "all"]);
    assert!(!racecheck.contains("--kernel-name-exclude"), "{racecheck}");
    // A newer compute-sanitizer for racecheck alone: racecheck runs it,
    // with the filter; memcheck keeps the one on PATH.
    let (racecheck, memcheck, _) = racecheck_of("2025.3.1.0", &["--racecheck-sanitizer", "NEWER"]);
    assert!(
        racecheck.contains("compute-sanitizer-2026.4\"") && racecheck.contains(filter),
        "{racecheck}"
    );
    assert!(
        !memcheck.contains("2026.4") && !memcheck.contains("--kernel-name-exclude"),
        "{memcheck}"
    );
}

/// The racecheck and memcheck commands, and what was said on stderr, in a
/// run of a training script whose Python has PyPI's compute-sanitizer
/// answering as `pypi_version` (the toolkit's fake on PATH answers as
/// 2025.3.1), with `args`.
fn racecheck_with_pypi(pypi_version: &str, args: &[&str]) -> (String, String, String) {
    let (report, stderr) = with_pypi(pypi_version, "plain,memcheck,racecheck", args);
    let command = |tool: &str| stage(&report, tool)["command"].to_string();
    (command("racecheck"), command("memcheck"), stderr)
}

/// The JSON report and stderr of a run of `stages` of a training script
/// whose Python has PyPI's compute-sanitizer answering as `pypi_version`
/// (the toolkit's fake on PATH answers as 2025.3.1), with `args`.
fn with_pypi(pypi_version: &str, stages: &str, args: &[&str]) -> (serde_json::Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let fake = root().join("tests/fakes/compute-sanitizer");
    // The toolkit's compute-sanitizer, found on PATH as users have it.
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&fake, bin.join("compute-sanitizer")).unwrap();
    // pip install nvidia-cuda-sanitizer-api, into a folder of sys.path.
    let site = tmp.path().join("pypi-site");
    let pypi = site.join("nvidia/cu13/compute-sanitizer/compute-sanitizer");
    std::fs::create_dir_all(pypi.parent().unwrap()).unwrap();
    fake_sanitizer_answering(&pypi, pypi_version);
    let mut cmd = with_fake_torch(tmp.path(), TRAINING);
    let python_path = format!(
        "{}:{}",
        cmd.get_envs()
            .find(|(k, _)| *k == "PYTHONPATH")
            .and_then(|(_, v)| v)
            .unwrap()
            .to_string_lossy(),
        site.display()
    );
    let out = run(stages_of(&mut cmd, "2025.3.1.0", stages)
        .env("PYTHONPATH", python_path)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .args(args)
        .arg("--out-dir")
        .arg(tmp.path().join("run"))
        .args(["--", "python3", "prog.py"]));
    (json(&out), out.stderr)
}

#[test]
fn racecheck_takes_the_newer_compute_sanitizer_pip_installed_in_the_programs_python() {
    let filter = "--kernel-name-exclude\",\"regex=(cudnn|cublas";
    let pypi = "pypi-site/nvidia/cu13/compute-sanitizer/compute-sanitizer\"";
    // pip install nvidia-cuda-sanitizer-api (2026.4): racecheck runs under
    // it, library kernels left out, and the run says so before its stages;
    // memcheck keeps the toolkit's (2026.4's memcheck fails cuDNN programs).
    let (racecheck, memcheck, stderr) = racecheck_with_pypi("2026.4.0.0", &[]);
    assert!(
        racecheck.contains(pypi) && racecheck.contains(filter),
        "{racecheck}"
    );
    assert!(!memcheck.contains("pypi-site"), "{memcheck}");
    assert!(
        stderr.contains("racecheck runs under compute-sanitizer 2026.4.0.0 from")
            && stderr.contains("--racecheck-sanitizer names another"),
        "{stderr}"
    );
    // An older one from PyPI gives nothing: the toolkit's analyses all.
    let (racecheck, _, stderr) = racecheck_with_pypi("2025.1.0.0", &[]);
    assert!(
        !racecheck.contains("pypi-site") && !racecheck.contains(filter),
        "{racecheck}"
    );
    assert!(!stderr.contains("racecheck runs under"), "{stderr}");
    // A compute-sanitizer the user named is the one every stage runs.
    let named = root().join("tests/fakes/compute-sanitizer");
    let named = named.to_str().unwrap();
    let (racecheck, _, _) = racecheck_with_pypi("2026.4.0.0", &["--compute-sanitizer", named]);
    assert!(!racecheck.contains("pypi-site"), "{racecheck}");
}

#[test]
fn synccheck_takes_the_newer_compute_sanitizer_too_and_leaves_library_kernels_out() {
    let filter = "--kernel-name-exclude\",\"regex=(cudnn|cublas";
    let pypi = "pypi-site/nvidia/cu13/compute-sanitizer/compute-sanitizer\"";
    let stages = "plain,memcheck,racecheck,initcheck,synccheck";
    // cuDNN's fused attention floods synccheck with barrier errors that are
    // the library's: under 2026.4 they are left out, as racecheck's races.
    let (report, stderr) = with_pypi("2026.4.0.0", stages, &[]);
    let command = |tool: &str| stage(&report, tool)["command"].to_string();
    for tool in ["racecheck", "synccheck"] {
        assert!(
            command(tool).contains(pypi) && command(tool).contains(filter),
            "{tool}: {}",
            command(tool)
        );
    }
    // memcheck checks every kernel under the toolkit's.
    assert!(
        !command("memcheck").contains("pypi-site")
            && !command("memcheck").contains("--kernel-name-exclude"),
        "{}",
        command("memcheck")
    );
    // initcheck takes it too, and leaves the libraries' kernels out but
    // not PyTorch's (a read of a `torch.empty` tensor in ATen's kernel is
    // the user's), tracking what the left-out ones write.
    let initcheck = command("initcheck");
    assert!(
        initcheck.contains(pypi)
            && initcheck.contains(filter)
            && initcheck.contains("\"--initcheck-track-filtered-global-memory\",\"yes\"")
            && !initcheck.contains("_ZN2at6native"),
        "{initcheck}"
    );
    assert!(
        stderr.contains(
            "racecheck, synccheck and initcheck run under compute-sanitizer 2026.4.0.0 from"
        ) && stderr.contains(
            "which leaves library kernels (and PyTorch's from racecheck and synccheck) out of them"
        ),
        "{stderr}"
    );
    let reason = stage(&report, "initcheck")["reason"].to_string();
    assert!(
        reason.contains("left out, what they write still tracked"),
        "{reason}"
    );
    // The clean stage says what it left out, and that it could not gate.
    let reason = stage(&report, "synccheck")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("left out: a barrier error inside one is their own code and never gates"),
        "{reason}"
    );
    // racecheck named by the user keeps its own; synccheck still takes PyPI's.
    let named = root().join("tests/fakes/compute-sanitizer");
    let named = named.to_str().unwrap();
    let (report, stderr) = with_pypi("2026.4.0.0", stages, &["--racecheck-sanitizer", named]);
    let command = |tool: &str| stage(&report, tool)["command"].to_string();
    assert!(
        !command("racecheck").contains("pypi-site"),
        "{}",
        command("racecheck")
    );
    assert!(
        command("synccheck").contains(pypi),
        "{}",
        command("synccheck")
    );
    assert!(
        stderr.contains("synccheck and initcheck run under compute-sanitizer 2026.4.0.0")
            && stderr.contains("(and PyTorch's from synccheck) out of them"),
        "{stderr}"
    );
    // --gate-scope all gates on what library kernels show: synccheck checks them.
    let (report, _) = with_pypi("2026.4.0.0", stages, &["--gate-scope", "all"]);
    let synccheck = stage(&report, "synccheck")["command"].to_string();
    assert!(!synccheck.contains("--kernel-name-exclude"), "{synccheck}");
}

#[test]
fn a_test_suite_runs_whole_in_every_stage_by_default_and_a_users_steps_still_end_it() {
    // pytest loaded (its `_pytest` package, as `python -m pytest` has it):
    // each test trains a few steps of its own, and a SystemExit inside a
    // test fails it. By default every stage runs the suite to its end.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("_pytest")).unwrap();
    std::fs::write(tmp.path().join("_pytest/__init__.py"), "").unwrap();
    let suite = format!("import _pytest\n{TRAINING}");
    let (dir, out) = program_run(tmp.path(), &suite, "run", "plain,csan,memory", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    for tool in ["plain", "csan", "memory"] {
        let stdout = std::fs::read_to_string(dir.join(tool).join("stdout")).unwrap();
        assert!(stdout.ends_with("trained 500 steps\n"), "{tool}: {stdout}");
        assert!(stage(&report, tool)["covered"].is_null(), "{tool}");
    }
    assert!(
        !report["notes"].to_string().contains("first steps"),
        "{}",
        report["notes"]
    );
    // The user's --steps is the user's: it ends the suite too.
    let (dir, out) = program_run(tmp.path(), &suite, "asked", "plain,csan", &["--steps", "3"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let csan = std::fs::read_to_string(dir.join("csan/stdout")).unwrap();
    assert_eq!(csan, "step 1\nstep 2\nstep 3\ncleanup ran\n");
}
