//! What the program's processes write is checked before a stage that
//! watches from inside (CSAN, the memory hook) vouches for it: the hook in
//! every process that used a GPU, step records whole, its paths absolute,
//! armed even when torch came first. Real python3, cudawatch's real hook,
//! the fake torch (tests/fakes/pytorch/), and the fake nvidia-smi for the
//! processes on the GPU.

use crate::helpers::{Output, json, run, with_fake_torch};
use crate::run::stage;

/// Twelve optimizer steps that hold nothing from one to the next.
const STEADY: &str = "import os, subprocess, sys
import torch
if os.environ.get('CHDIR'):
    os.chdir('/')
# The workers first: a stage that checks the loop's first steps ends the
# program inside the loop.
if os.environ.get('SCRUBBED_WORKER'):
    # A launcher that starts its GPU worker with a cleared environment:
    # no PYTHONPATH, so no hook, no CSAN, no memory history in it.
    worker = subprocess.Popen(['env', '-i', sys.executable, '-c',
                               'import time; time.sleep(4)  # ' + os.environ['SCRUBBED_WORKER']])
    out = os.environ.get('CUDAWATCH_HOOK_OUT')
    if os.environ.get('FORGE_LINES') and out:
        # The launcher writes the hook's lines for its worker itself.
        with open(os.path.join(out, 'processes.jsonl'), 'a') as f:
            f.write('{\"pid\": %d, \"hook\": \"start\"}\\n' % worker.pid)
            f.write('{\"pid\": %d, \"torch\": true, \"csan\": true}\\n' % worker.pid)
    worker.wait()
if os.environ.get('REWRITE_LINES') and os.environ.get('CUDAWATCH_HOOK_OUT'):
    # Something in the program overwrites the hook's lines with its own,
    # which lack the stage's nonce.
    with open(os.path.join(os.environ['CUDAWATCH_HOOK_OUT'], 'processes.jsonl'), 'w') as f:
        f.write('{\"pid\": %d, \"hook\": \"start\"}\\n' % os.getpid())
        f.write('{\"pid\": %d, \"torch\": true, \"csan\": true}\\n' % os.getpid())
if os.environ.get('CSAN_OFF_WORKER'):
    # A worker that keeps the hook but starts without CSAN.
    subprocess.run(['env', '-u', 'TORCH_CUDA_SANITIZER', sys.executable, '-c',
                    'import torch, time; time.sleep(4)  # ' + os.environ['CSAN_OFF_WORKER']])
opt = torch.optim.Optimizer()
for step in range(12):
    x = torch.cuda.fake_alloc(8 << 20)
    torch.cuda.fake_free(x)
    opt.step()
damage = os.environ.get('DAMAGE_STEPS')
out = os.environ.get('CUDAWATCH_HOOK_OUT')
if damage and out:
    steps = os.path.join(out, 'steps.jsonl')
    if damage == 'delete':
        os.remove(steps)
    elif damage == 'cut':
        lines = open(steps).read().splitlines(True)
        open(steps, 'w').write(''.join(lines[:3]))
    else:
        with open(steps, 'a') as f:
            f.write('{\"step\": 13, garbled\\n')
";

fn staged(stages: &str, env: &[(&str, &str)], out_dir: &str) -> (tempfile::TempDir, Output) {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = with_fake_torch(tmp.path(), STEADY);
    let (_, path) = crate::helpers::fake_smi_path(tmp.path());
    cmd.env("PATH", path)
        .args([
            "--color", "never", "run", "--grace", "0.5", "--stages", stages,
        ])
        .args(["--format", "json", "--out-dir", out_dir])
        .args(["--", "python3", "prog.py"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(cmd);
    (tmp, out)
}

fn memory_of(out: &Output) -> serde_json::Value {
    stage(&json(out), "memory").clone()
}

#[test]
fn the_memory_stage_arms_when_the_users_sitecustomize_imported_torch_first() {
    // Before, the hook waited for an `import torch` that had already
    // happened: "never used CUDA", CLEAN, whatever the program kept.
    let (_tmp, out) = staged("plain,memory", &[("USER_SITE_IMPORTS_TORCH", "1")], "run");
    let memory = memory_of(&out);
    assert_eq!(memory["outcome"], "clean", "{memory}\n{}", out.stderr);
    assert!(
        memory["reason"]
            .as_str()
            .unwrap()
            .contains("no growth over 12"),
        "{memory}"
    );
}

#[test]
fn a_program_that_changes_directory_keeps_the_hooks_output() {
    // The default --out-dir is relative; the hook's paths were too.
    let (_tmp, out) = staged("plain,memory", &[("CHDIR", "1")], "relative-run");
    let memory = memory_of(&out);
    assert_eq!(memory["outcome"], "clean", "{memory}\n{}", out.stderr);
}

#[test]
fn damaged_step_records_make_the_memory_stage_inconclusive_not_clean() {
    for damage in ["delete", "cut", "garble"] {
        let (_tmp, out) = staged("plain,memory", &[("DAMAGE_STEPS", damage)], "run");
        let memory = memory_of(&out);
        assert_eq!(memory["outcome"], "inconclusive", "{damage}: {memory}");
        assert!(
            memory["reason"]
                .as_str()
                .unwrap()
                .contains("step records were damaged"),
            "{damage}: {memory}"
        );
        assert_eq!(out.code, 3, "{damage}");
    }
}

#[test]
fn a_gpu_worker_started_with_a_cleared_environment_leaves_csan_and_memory_inconclusive() {
    let marker = format!("cudawatch-test-scrubbed-{}", std::process::id());
    let env = [
        ("SCRUBBED_WORKER", marker.as_str()),
        ("FAKE_SMI_FREE", "0, GPU-a, 79000"),
        ("FAKE_SMI_HOLD", &format!("{marker}=700")),
    ];
    let (_tmp, out) = staged("plain,csan,memory", &env, "run");
    unhooked_worker_leaves_csan_and_memory_inconclusive(&out);
    // The same program without the scrubbed worker is clean in both.
    let (_tmp, out) = staged("plain,csan,memory", &[], "run");
    let report = json(&out);
    for name in ["csan", "memory"] {
        assert_eq!(stage(&report, name)["outcome"], "clean", "{name}");
    }
}

/// Both stages that watch from inside are inconclusive, saying `why`.
fn csan_and_memory_inconclusive(out: &Output, why: &str) {
    let report = json(out);
    for name in ["csan", "memory"] {
        let s = stage(&report, name);
        assert_eq!(s["outcome"], "inconclusive", "{name}: {s}\n{}", out.stderr);
        assert!(s["reason"].as_str().unwrap().contains(why), "{name}: {s}");
    }
}

/// Both stages that watch from inside name the worker that ran without
/// the hook, and neither is clean.
fn unhooked_worker_leaves_csan_and_memory_inconclusive(out: &Output) {
    csan_and_memory_inconclusive(out, "used the GPU without cudawatch's hook");
}

#[test]
fn hook_lines_a_launcher_wrote_for_its_worker_do_not_vouch_for_it() {
    // Before: the launcher's hand-written lines said the scrubbed worker
    // had the hook and CSAN on, and both stages came out clean. The hook's
    // own lines carry the stage's nonce; these do not.
    let marker = format!("cudawatch-test-forged-{}", std::process::id());
    let env = [
        ("SCRUBBED_WORKER", marker.as_str()),
        ("FORGE_LINES", "1"),
        ("FAKE_SMI_FREE", "0, GPU-a, 79000"),
        ("FAKE_SMI_HOLD", &format!("{marker}=700")),
    ];
    let (_tmp, out) = staged("plain,csan,memory", &env, "run");
    assert_eq!(out.code, 3, "{}", out.stderr);
    unhooked_worker_leaves_csan_and_memory_inconclusive(&out);
}

#[test]
fn hook_lines_without_the_stages_nonce_vouch_for_nothing_even_where_the_sampler_saw_nothing() {
    // Before: with no GPU process sampled (a short job, a container whose
    // nvidia-smi lists none) and the plain run's sampler seeing none
    // either, lines without the nonce left both stages CLEAN on nothing.
    let (_tmp, out) = staged("plain,csan,memory", &[("REWRITE_LINES", "1")], "run");
    assert_eq!(out.code, 3, "{}", out.stderr);
    csan_and_memory_inconclusive(&out, "cudawatch's hook left no line of this stage's");
}

#[test]
fn a_gpu_worker_without_csan_leaves_csan_inconclusive_and_memory_clean() {
    let marker = format!("cudawatch-test-csan-off-{}", std::process::id());
    let env = [
        ("CSAN_OFF_WORKER", marker.as_str()),
        ("FAKE_SMI_FREE", "0, GPU-a, 79000"),
        ("FAKE_SMI_HOLD", &format!("{marker}=700")),
    ];
    let (_tmp, out) = staged("plain,csan,memory", &env, "run");
    let report = json(&out);
    let csan = stage(&report, "csan");
    assert_eq!(csan["outcome"], "inconclusive", "{csan}");
    assert!(
        csan["reason"]
            .as_str()
            .unwrap()
            .contains("without CSAN on in its torch"),
        "{csan}"
    );
    assert_eq!(stage(&report, "memory")["outcome"], "clean");
}

#[test]
fn a_stage_whose_sampler_saw_no_process_is_counted_against_the_plain_runs() {
    // Two GPU workers the plain run's sampler saw; under CSAN they were
    // too short to be sampled (here: not started), and the stage vouched
    // for a program it saw one process of.
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!("cudawatch-test-short-{}", std::process::id());
    let program = format!(
        "import os, subprocess, sys
import torch
torch.cuda.init()
if os.environ.get('CUDAWATCH_STAGE') == 'plain':
    workers = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3)  # {marker}'])
               for _ in range(2)]
    for w in workers:
        w.wait()
"
    );
    let mut cmd = with_fake_torch(tmp.path(), &program);
    let (_, path) = crate::helpers::fake_smi_path(tmp.path());
    cmd.env("PATH", path)
        .env("FAKE_SMI_FREE", "0, GPU-a, 79000")
        .env("FAKE_SMI_HOLD", format!("{marker}=700"))
        .args([
            "--color",
            "never",
            "run",
            "--grace",
            "0.5",
            "--stages",
            "plain,csan",
        ])
        .args([
            "--format",
            "json",
            "--out-dir",
            "run",
            "--",
            "python3",
            "prog.py",
        ]);
    let out = run(cmd);
    let csan = stage(&json(&out), "csan").clone();
    assert_eq!(csan["outcome"], "inconclusive", "{csan}\n{}", out.stderr);
    assert!(
        csan["reason"]
            .as_str()
            .unwrap()
            .contains("where the plain run had 2 on the GPU"),
        "{csan}"
    );
}

/// `prog` run by python3 with cudawatch's hook and the fake torch, the
/// hook's facts in `out`, `env` set: what the program printed.
fn hooked_python(prog: &str, out: &std::path::Path, env: &[(&str, &str)]) -> String {
    let root = crate::helpers::root();
    let output = std::process::Command::new("python3")
        .args(["-c", prog])
        .env(
            "PYTHONPATH",
            format!(
                "{}:{}",
                root.join("src/tools/hook").display(),
                root.join("tests/fakes/pytorch").display()
            ),
        )
        .env("CUDAWATCH_HOOK_OUT", out)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_rerun_with_tensors_filled_keeps_the_fill_on_whatever_the_program_asks() {
    // initcheck's rerun that tells a tensor nobody wrote from ATen's own
    // scratch: the fill must be on for the whole run, or a read still
    // there would be taken for ATen's when it was the user's tensor.
    let prog = "import torch
torch.use_deterministic_algorithms(False)
print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())";
    let tmp = tempfile::tempdir().unwrap();
    let printed = hooked_python(prog, tmp.path(), &[("CUDAWATCH_FILL_TENSORS", "1")]);
    assert_eq!(printed.trim(), "True True");
    let facts: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("hook.json")).unwrap()).unwrap();
    assert_eq!(facts["tensors_filled"], true, "{facts}");
    assert_eq!(facts["deterministic_kept_on"], 1, "{facts}");
    // A program that turns the fill itself off leaves tensors unfilled:
    // the rerun then says so, and proves nothing.
    let tmp = tempfile::tempdir().unwrap();
    hooked_python(
        "import torch, torch.utils.deterministic
torch.utils.deterministic.fill_uninitialized_memory = False",
        tmp.path(),
        &[("CUDAWATCH_FILL_TENSORS", "1")],
    );
    let facts: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("hook.json")).unwrap()).unwrap();
    assert_eq!(facts["tensors_filled"], false, "{facts}");
    // Every other stage leaves the program's choice alone.
    let tmp = tempfile::tempdir().unwrap();
    let printed = hooked_python(prog, tmp.path(), &[]);
    assert_eq!(printed.trim(), "False False");
}
