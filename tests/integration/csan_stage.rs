//! The CSAN stage end to end without a GPU: real `python3`, cudawatch's
//! real hook, a fake `torch` (tests/fakes/pytorch/) that turns CSAN on as
//! torch 2.11 does, and the race report PyTorch printed on the H100
//! (sample-reports/pytorch_instruments/stream_race/csan.stderr).

use std::path::{Path, PathBuf};

use crate::helpers::{
    Output, checklist_item, cudawatch, json, read_json, root, run, sample, with_fake_torch,
};
use crate::run::stage;

/// `cudawatch run` of the plain and csan stages, up to the run directory.
const RUN_PLAIN_AND_CSAN: [&str; 6] = [
    "run",
    "--stages",
    "plain,csan",
    "--format",
    "json",
    "--out-dir",
];

struct Case {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    out: Output,
}

/// `cudawatch run --stages plain,csan -- python3 prog.py` with `program` as
/// prog.py, the fake torch and a user `sitecustomize` on PYTHONPATH.
fn csan_run(program: &str, env: &[(&str, &str)]) -> Case {
    csan_run_as(program, env, &["python3", "prog.py"])
}

/// As [`csan_run`], with the program started by `launch` (a wrapper or a
/// shell around `python3 prog.py`).
fn csan_run_as(program: &str, env: &[(&str, &str)], launch: &[&str]) -> Case {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut cmd = with_fake_torch(tmp.path(), program);
    cmd.env(
        "RACE_REPORT",
        sample("pytorch_instruments").join("stream_race/csan.stderr"),
    )
    .args(RUN_PLAIN_AND_CSAN)
    .arg(&dir)
    .arg("--")
    .args(launch);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(cmd);
    Case {
        _tmp: tmp,
        dir,
        out,
    }
}

fn csan_stage(case: &Case) -> serde_json::Value {
    stage(&json(&case.out), "csan").clone()
}

const USES_TORCH: &str = "import torch\ntorch.cuda.init()\nprint('step 0 loss 2.31')\n";

/// Prints PyTorch's real race report and raises as CSAN does, only when
/// CSAN is on; plainly the program is silent and exits 0 (as on the H100).
const RACES: &str = "import os, sys, torch
print('step 0 loss 2.31')
if torch.cuda._sanitizer.cuda_sanitizer.enabled:
    sys.stderr.write(open(os.environ['RACE_REPORT']).read())
    sys.exit(1)
";

#[test]
fn a_correct_torch_program_is_clean_under_csan_and_the_users_sitecustomize_still_runs() {
    let case = csan_run(USES_TORCH, &[]);
    assert_eq!(case.out.code, 0, "{}", case.out.stderr);
    let csan = csan_stage(&case);
    assert_eq!(csan["outcome"], "clean", "{csan}");
    let reason = csan["reason"].as_str().unwrap();
    assert!(
        reason.contains("torch 2.11.0+fake")
            && reason.contains("not the arguments of custom kernels"),
        "{reason}"
    );
    let marker = case.dir.parent().unwrap().join("user-sitecustomize-csan");
    assert!(
        marker.exists(),
        "the user's sitecustomize ran under the hook"
    );
    // The hook wrote into the stage's folder only.
    assert!(case.dir.join("csan/hook.json").exists());
    let env: Vec<&str> = csan["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    assert!(env.contains(&"TORCH_CUDA_SANITIZER=1"), "{env:?}");
    assert!(
        env.contains(&"-CUDA_LAUNCH_BLOCKING"),
        "streams must overlap: {env:?}"
    );
}

#[test]
fn the_guides_stream_race_gates_at_the_users_lines_under_csan_only() {
    let case = csan_run(RACES, &[]);
    assert_eq!(case.out.code, 1, "{}", case.out.stderr);
    let report = json(&case.out);
    assert_eq!(stage(&report, "plain")["outcome"], "clean");
    assert_eq!(stage(&report, "csan")["outcome"], "findings");
    let race = crate::helpers::site_of_kind(&report, "stream_race");
    assert_eq!(race["location"]["line"], 18);
    assert_eq!(race["other"]["location"]["line"], 16);
    let item = checklist_item(&report, "no_stream_races");
    assert_eq!(item["status"], "fail", "{item}");
}

#[test]
fn a_torch_program_behind_a_wrapper_or_a_shell_still_gets_csan() {
    // Before, each of these was "not applicable: not a Python program" and
    // CLEAN, where the direct run reports the race.
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("train.sh");
    std::fs::write(
        &script,
        "#!/bin/bash
set -e
python3 prog.py \"$@\"
",
    )
    .unwrap();
    let script = script.to_string_lossy().into_owned();
    for launch in [
        &["env", "PYTHONUNBUFFERED=1", "python3", "prog.py"][..],
        &["sh", "-c", "python3 prog.py"],
        &["nice", "-n", "5", "python3", "prog.py"],
        &["timeout", "120", "python3", "prog.py"],
        &["bash", &script],
    ] {
        let case = csan_run_as(RACES, &[], launch);
        assert_eq!(case.out.code, 1, "{launch:?}: {}", case.out.stderr);
        let report = json(&case.out);
        assert_eq!(stage(&report, "csan")["outcome"], "findings", "{launch:?}");
        let race = crate::helpers::site_of_kind(&report, "stream_race");
        assert_eq!(race["location"]["line"], 18, "{launch:?}");
    }
}

#[test]
fn a_launcher_cudawatch_does_not_know_gets_csan_when_python_ran_under_it() {
    // `runner python3 prog.py`: no word of it says Python, so csan was
    // planned as not applicable; the plain run saw python3 on the GPU, and
    // what ran decides.
    let tmp = tempfile::tempdir().unwrap();
    let (bin, path) = crate::helpers::fake_smi_path(tmp.path());
    let runner = bin.join("runner");
    std::fs::write(&runner, "#!/bin/sh\nexec \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).unwrap();
    let marker = format!("cudawatch-test-runner-{}", std::process::id());
    let program = format!("import time\ntime.sleep(3)  # {marker}\n{RACES}");
    let case = csan_run_as(
        &program,
        &[
            ("PATH", path.as_str()),
            ("FAKE_SMI_FREE", "0, GPU-a, 79000"),
            ("FAKE_SMI_HOLD", &format!("python3 prog.py {marker}=600")),
        ],
        &[runner.to_str().unwrap(), "python3", "prog.py", &marker],
    );
    let report = json(&case.out);
    let csan = stage(&report, "csan");
    assert_eq!(csan["outcome"], "findings", "{csan}\n{}", case.out.stderr);
    assert_eq!(case.out.code, 1);
}

#[test]
fn csan_is_never_clean_without_evidence_that_it_watched() {
    // (what, program, environment, outcome, words of the reason)
    type Row<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, &'a str, &'a str);
    let rows: Vec<Row> = vec![
        (
            "never imports torch",
            "print('no torch here')\n",
            vec![],
            "skipped",
            "never imported torch",
        ),
        (
            "a torch that ignores the variable",
            USES_TORCH,
            vec![("FAKE_TORCH_CSAN", "off")],
            "inconclusive",
            "ignored TORCH_CUDA_SANITIZER=1",
        ),
        (
            "a torch without CSAN",
            USES_TORCH,
            vec![("FAKE_TORCH_CSAN", "missing")],
            "inconclusive",
            "has no CSAN",
        ),
        (
            "the hook turned off",
            USES_TORCH,
            vec![("CUDAWATCH_NO_HOOK", "1")],
            "inconclusive",
            "hook did not report",
        ),
        (
            "killed before its exit",
            "import os, signal, torch\nos.kill(os.getpid(), signal.SIGKILL)\n",
            vec![],
            "target failed",
            "",
        ),
    ];
    for (name, program, env, outcome, words) in rows {
        let case = csan_run(program, &env);
        let csan = csan_stage(&case);
        let reason = csan["reason"].as_str().unwrap();
        if outcome == "target failed" {
            // Killed before the hook could write: never clean.
            assert_ne!(csan["outcome"], "clean", "{name}: {csan}");
            continue;
        }
        assert_eq!(csan["outcome"], outcome, "{name}: {csan}");
        assert!(reason.contains(words), "{name}: {reason}");
        if outcome == "inconclusive" {
            assert_eq!(case.out.code, 3, "{name}: {}", case.out.stderr);
        }
        if outcome == "skipped" {
            // Not applicable is neither clean nor "not checked".
            assert_eq!(case.out.code, 0, "{name}: {}", case.out.stderr);
            let item = checklist_item(&json(&case.out), "no_stream_races");
            assert_eq!(item["status"], "skipped", "{name}: {item}");
        }
    }
}

#[test]
fn csan_does_not_apply_to_a_program_that_is_not_python() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = run(cudawatch()
        .args(RUN_PLAIN_AND_CSAN)
        .arg(&dir)
        .args(["--", "true"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let csan = stage(&json(&out), "csan").clone();
    assert_eq!(csan["outcome"], "skipped", "{csan}");
    assert!(
        csan["reason"]
            .as_str()
            .unwrap()
            .starts_with("not applicable"),
        "{csan}"
    );
    assert!(
        !Path::new(&dir.join("hook")).exists(),
        "no hook written for it"
    );
}

#[test]
fn a_run_whose_every_stage_did_not_apply_checked_nothing_and_is_not_clean() {
    // `--stages csan` on a C++ binary: before, "CLEAN", exit 0.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(cudawatch()
        .args(["run", "--stages", "csan", "--out-dir"])
        .arg(tmp.path().join("run"))
        .args(["--", "true"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("nothing was checked") && !out.stderr.contains("CLEAN"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_program_stopped_under_csan_by_a_failure_already_found_is_blocked_not_inconclusive() {
    // Seen on the H100 with tests/gpu/real/embedding_bad_index.py: the plain
    // run reports the device assert at the user's line (exit 1); under CSAN
    // the same assert stops the program. Before: the csan stage made the
    // run inconclusive (exit 3) instead of blocked by the assert.
    let assert_line = "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:111: operator(): \
        block: [0,0,0], thread: [0,0,0] Assertion `-sizes[i] <= index && index < sizes[i] \
        && \"index out of bounds\"` failed.";
    let program = format!(
        "import sys, torch\ntorch.cuda.init()\nsys.stderr.write({assert_line:?} + '\\n')\nsys.exit(1)\n"
    );
    let case = csan_run(&program, &[]);
    assert_eq!(case.out.code, 1, "{}", case.out.stderr);
    let csan = csan_stage(&case);
    assert_eq!(csan["outcome"], "inconclusive", "{csan}");
    assert!(
        case.out
            .stderr
            .contains("csan could not finish because of them"),
        "{}",
        case.out.stderr
    );
}

#[test]
fn csan_is_off_in_a_forked_dataloader_worker_and_on_in_the_program() {
    // On the H100 (torch 2.11) CSAN in a forked DataLoader worker
    // initialised CUDA there: "Cannot re-initialize CUDA in forked
    // subprocess", the program exited 1 and the csan stage was
    // inconclusive. The hook now turns CSAN off in forked children.
    let program = "import os, torch
from torch.cuda import _sanitizer
pid = os.fork()
if pid == 0:
    open(os.path.join(os.environ['MARKER_DIR'], os.environ['CUDAWATCH_STAGE'] + '-child-' + str(_sanitizer.cuda_sanitizer.enabled)), 'w').close()
    os._exit(0)
os.waitpid(pid, 0)
torch.cuda.init()
open(os.path.join(os.environ['MARKER_DIR'], os.environ['CUDAWATCH_STAGE'] + '-parent-' + str(_sanitizer.cuda_sanitizer.enabled)), 'w').close()
print('step 0 loss 2.31')
";
    let case = csan_run(program, &[]);
    let marker = |name: &str| case.dir.parent().unwrap().join(name).exists();
    assert!(marker("csan-child-False"), "{}", case.out.stderr);
    assert!(!marker("csan-child-True"), "{}", case.out.stderr);
    assert!(marker("csan-parent-True"), "{}", case.out.stderr);
    assert_eq!(csan_stage(&case)["outcome"], "clean", "{}", case.out.stderr);
}

#[test]
fn a_later_python_process_without_torch_does_not_overwrite_what_the_hook_saw() {
    // Every Python process of a program runs the hook and writes hook.json
    // at exit. Seen on the H100 (tests/gpu/real/ddp_step.py): after the
    // spawned DDP worker and its parent, multiprocessing's resource tracker
    // (no torch) exited last, and the csan and memory stages said "the
    // program never imported torch"; under torchrun the agent (torch, no
    // CUDA) said CUDA was never used.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let python = |code: &str| {
        let status = std::process::Command::new("python3")
            .args(["-c", code])
            .env(
                "PYTHONPATH",
                format!(
                    "{}:{}",
                    crate::helpers::root().join("src/tools/hook").display(),
                    crate::helpers::root().join("tests/fakes/pytorch").display()
                ),
            )
            .env("CUDAWATCH_HOOK_OUT", &out)
            .env("CUDAWATCH_STAGE", "csan")
            .status()
            .unwrap();
        assert!(status.success());
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(out.join("hook.json")).unwrap())
            .unwrap()
    };
    assert_eq!(python("import torch")["torch_imported"], true);
    // The resource tracker's exit, after the worker's.
    assert_eq!(python("pass")["torch_imported"], true);
    // Nothing yet: a process without torch writes its facts.
    std::fs::remove_file(out.join("hook.json")).unwrap();
    assert_eq!(python("pass")["torch_imported"], false);
}

/// A CUDA graph's recipe (torch.cuda.graph): capture a step, copy new data
/// into its static input, replay. Real CSAN booked the captured operators
/// as running and reported the copy as a race (H100, torch 2.11,
/// tests/gpu/real/cudagraph_step.py); the program prints that report
/// whenever CSAN booked an operator during the capture.
const GRAPH_RECIPE: &str = "import os, sys, torch
torch.fake_op('aten::add')
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    torch.fake_op('aten::addmm')
    torch.fake_op('aten::relu')
torch.fake_op('aten::copy_')
for _ in range(3):
    g.replay()
mode = torch.cuda._sanitizer.CUDASanitizerDispatchMode
if mode.booked_in_capture:
    sys.stderr.write(open(os.environ['RACE_REPORT']).read())
    sys.exit(1)
# A frame of cudawatch's hook in a booked stack would be the line a race
# is reported at.
hooks = [f for f in mode.booked_files if f.endswith('sitecustomize.py')]
if hooks:
    sys.exit('the hook is in a call stack CSAN keeps: ' + hooks[0])
print('loss 0.25')
";

#[test]
fn operators_captured_into_a_cuda_graph_are_not_races_and_the_stage_says_csan_did_not_see_them() {
    let case = csan_run(GRAPH_RECIPE, &[]);
    assert_eq!(case.out.code, 0, "{}", case.out.stderr);
    let csan = csan_stage(&case);
    assert_eq!(csan["outcome"], "clean", "{csan}");
    let reason = csan["reason"].as_str().unwrap();
    assert!(
        reason.contains("nor inside CUDA graphs: 2 operators captured and 3 replays not checked"),
        "{reason}"
    );
    // Operators outside the capture are still CSAN's, before CUDA was
    // initialised too (asking then whether a stream captures would have
    // initialised it: the fake torch raises).
    let facts = crate::helpers::read_json(&case.dir.join("csan/hook.json"));
    assert_eq!(facts["errors"], serde_json::json!([]), "{facts}");
    // Without the hook's help, the same program is CSAN's false race.
    let bare = csan_run(GRAPH_RECIPE, &[("CUDAWATCH_NO_HOOK", "1")]);
    assert_eq!(csan_stage(&bare)["outcome"], "findings");
}

/// A function compiled with torch.compile (as a decorator with options,
/// and by a call), then run.
const COMPILES: &str = "import torch
torch.cuda.init()
@torch.compile(mode='max-autotune')
def scaled(x):
    return torch.fake_op('aten::mul')
step = torch.compile(lambda: torch.fake_op('aten::add'))
scaled(1)
step()
print('loss 0.25')
";

#[test]
fn torch_compile_under_csan_is_said_to_run_as_eager_operators() {
    // Dynamo compiles nothing under CSAN's dispatch mode (H100, torch
    // 2.11, sample-reports/beyond/compile_csan/): what CSAN checked of a
    // compiled program is its eager operators, and the stage says so.
    let case = csan_run(COMPILES, &[]);
    assert_eq!(case.out.code, 0, "{}", case.out.stderr);
    let csan = csan_stage(&case);
    assert_eq!(csan["outcome"], "clean", "{csan}");
    let reason = csan["reason"].as_str().unwrap();
    assert!(
        reason.contains("torch.compile (2 calls) ran as eager operators under CSAN")
            && reason.contains("not Inductor's kernels"),
        "{reason}"
    );
    // A program that compiles nothing is not told about it.
    let plain = csan_run(USES_TORCH, &[]);
    let reason = csan_stage(&plain)["reason"].as_str().unwrap().to_string();
    assert!(!reason.contains("torch.compile"), "{reason}");
}

/// What the program saw and what cuDNN was told, printed by the program.
const TURNS_BENCHMARK_ON: &str = "import torch, torch.backends.cudnn
torch.backends.cudnn.benchmark = True
seen = [torch.backends.cudnn.benchmark, torch._C._get_cudnn_benchmark()]
with torch.backends.cudnn.flags(benchmark=True):
    seen.append(torch._C._get_cudnn_benchmark())
print(seen)
";

#[test]
fn the_hook_keeps_cudnn_benchmark_mode_off_when_told_and_counts_the_programs_requests() {
    // The hook itself, as the tool stages run it (compute-sanitizer and ncu
    // pass the environment on to the program): real python3, the fake
    // torch built as torch 2.11 builds torch.backends.cudnn.
    let tmp = tempfile::tempdir().unwrap();
    let hook = tmp.path().join("hook");
    std::fs::create_dir_all(&hook).unwrap();
    std::fs::write(
        hook.join("sitecustomize.py"),
        std::fs::read(root().join("src/tools/hook/sitecustomize.py")).unwrap(),
    )
    .unwrap();
    std::fs::write(tmp.path().join("prog.py"), TURNS_BENCHMARK_ON).unwrap();
    let python = |off: bool| {
        let mut cmd = std::process::Command::new("python3");
        cmd.current_dir(tmp.path())
            .arg("prog.py")
            .env(
                "PYTHONPATH",
                format!(
                    "{}:{}",
                    hook.display(),
                    root().join("tests/fakes/pytorch").display()
                ),
            )
            .env("CUDAWATCH_HOOK_OUT", tmp.path());
        if off {
            cmd.env("CUDAWATCH_CUDNN_BENCHMARK_OFF", "1");
        }
        cmd.output().unwrap()
    };
    let kept_off = python(true);
    assert_eq!(
        String::from_utf8_lossy(&kept_off.stdout),
        "[False, False, False]\n",
        "{}",
        String::from_utf8_lossy(&kept_off.stderr)
    );
    let facts = read_json(&tmp.path().join("hook.json"));
    assert_eq!(facts["cudnn_benchmark_refused"], 2, "{facts}");
    assert_eq!(facts["errors"], serde_json::json!([]), "{facts}");
    // Without the order (the plain, csan and memory stages) the program
    // gets what it asks for.
    let as_asked = python(false);
    assert_eq!(
        String::from_utf8_lossy(&as_asked.stdout),
        "[True, True, True]\n"
    );
}

#[test]
fn csan_of_a_torch_program_that_never_used_cuda_is_not_applicable_never_a_pass() {
    // It was "no races between streams: pass" and CLEAN, where the memory
    // stage beside it said the program never used CUDA.
    let case = csan_run("import torch\nprint('trained on the CPU')\n", &[]);
    assert_eq!(case.out.code, 0, "{}", case.out.stderr);
    let csan = csan_stage(&case);
    assert_eq!(csan["outcome"], "skipped", "{csan}");
    assert!(
        csan["reason"].as_str().unwrap().contains("never used CUDA"),
        "{csan}"
    );
    let report = json(&case.out);
    assert_ne!(checklist_item(&report, "no_stream_races")["status"], "pass");
    assert!(
        case.out.stderr.contains("not applicable: csan"),
        "{}",
        case.out.stderr
    );
}

#[test]
fn a_sparse_tensor_is_booked_by_its_indices_and_values_instead_of_stopping_csan() {
    // torch 2.11's CSAN books every argument by its data pointer, and a
    // sparse gradient (EmbeddingBag with sparse=True) has none: CSAN
    // raised inside its own dispatch and the correct program exited 1
    // (H200, tests/gpu/real/train_recsys.py), so the stage could only be
    // inconclusive. A layout the hook does not know is left out, and said.
    let program = "import torch
torch.cuda.init()
grad = torch.Tensor(layout=torch.sparse_coo, indices=torch.Tensor(4096), values=torch.Tensor(8192))
torch.fake_op('aten::_sparse_adam', torch.Tensor(12288), grad)
torch.fake_op('aten::values', torch.Tensor(layout='jagged'))
print('booked', torch.cuda._sanitizer.CUDASanitizerDispatchMode.booked_ptrs)
";
    let case = csan_run(program, &[]);
    assert_eq!(case.out.code, 0, "{}", case.out.stderr);
    let stdout = std::fs::read_to_string(case.dir.join("csan/stdout")).unwrap();
    assert_eq!(stdout, "booked [4096, 8192, 12288]\n");
    let csan = csan_stage(&case);
    assert_eq!(csan["outcome"], "clean", "{csan}");
    let reason = csan["reason"].as_str().unwrap();
    assert!(
        reason.contains("sparse tensors (1 operator argument)")
            && reason.contains("booked by cudawatch's hook as their indices and values")
            && reason.contains(
                "nor 1 operator argument of a layout without storage that cudawatch could not follow"
            ),
        "{reason}"
    );
}

#[test]
fn csan_failing_inside_itself_is_said_as_csans_failure_at_the_users_line() {
    // What torch 2.11's CSAN printed on the H200 when it met a sparse
    // gradient without the hook: its own RuntimeError, raised inside
    // torch/cuda/_sanitizer.py at the backward pass (line 17). The stage
    // cannot vouch, and says whose failure it was.
    let failed = sample("pytorch_instruments").join("sparse_race/csan.stderr");
    let uses_cuda = RACES.replace(
        "import os, sys, torch\n",
        "import os, sys, torch\ntorch.cuda.init()\n",
    );
    let case = csan_run(&uses_cuda, &[("RACE_REPORT", failed.to_str().unwrap())]);
    let csan = csan_stage(&case);
    assert_eq!(csan["outcome"], "inconclusive", "{csan}");
    assert!(
        csan["reason"].as_str().unwrap().starts_with(
            "CSAN itself failed at sparse_race.py:17 (RuntimeError: Cannot access data pointer \
             of Tensor that doesn't have storage, raised in torch/cuda/_sanitizer.py), and the \
             program exited 1 with it"
        ),
        "{csan}"
    );
    // With the hook handing CSAN the gradient's indices and values, the
    // same program's race was reported at the side stream's line.
    let raced = sample("pytorch_instruments").join("sparse_race/csan-hook.stderr");
    let case = csan_run(RACES, &[("RACE_REPORT", raced.to_str().unwrap())]);
    let report = json(&case.out);
    assert_eq!(stage(&report, "csan")["outcome"], "findings");
    let site = &report["findings"][0];
    assert_eq!(site["kind"], "stream_race", "{site}");
    assert_eq!(site["python_frame"]["line"], 19, "{site}");
}
