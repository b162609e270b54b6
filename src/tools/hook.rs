//! cudawatch's Python startup hook (`hook/sitecustomize.py`), shared by the
//! stages that watch a Python program from inside (csan, memory), by the
//! tool stages (sanitizers, ncu), which keep cuDNN's benchmark mode off
//! through it, and by every stage of a run told to stop the program after
//! its first optimizer steps (`--steps`). The run writes it into its own
//! `hook/` folder, never
//! the user's tree, and these stages put that folder first on
//! `PYTHONPATH`; the contract it keeps is in `docs/pytorch.md`.

use std::path::{Path, PathBuf};

use cudawatch_model::Outcome;

use super::{StageCommand, StageContext, StageRecord};

/// The hook, compiled in.
pub const SITECUSTOMIZE: &str = include_str!("hook/sitecustomize.py");

/// The folder of the run directory the hook is written to.
pub fn dir(run_dir: &Path) -> PathBuf {
    run_dir.join("hook")
}

/// `PYTHONPATH` with the hook first, then the user's own entries, and the
/// stage's folder as the hook's output, both absolute: a program that
/// changes directory (or a worker started elsewhere) must still find the
/// hook and write where the stage reads.
pub fn env(run_dir: &Path, stage_dir: &Path, pythonpath: Option<String>) -> Vec<(String, String)> {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let hook = absolute(&dir(run_dir)).display().to_string();
    let stage_dir = absolute(stage_dir);
    let path = match pythonpath {
        Some(old) if !old.is_empty() => format!("{hook}:{old}"),
        _ => hook,
    };
    vec![
        (HOOK_OUT.into(), stage_dir.display().to_string()),
        ("PYTHONPATH".into(), path),
        (HOOK_NONCE.into(), super::record::nonce()),
    ]
}

/// The variable that gives the hook this stage's nonce, which it writes in
/// each of its `processes.jsonl` lines: a line without it (a stale file, a
/// launcher's hand-written line) is not the hook's word for this run.
const HOOK_NONCE: &str = "CUDAWATCH_HOOK_NONCE";

/// The command of a stage that watches a Python program from inside: the
/// program as it runs for real (`CUDA_LAUNCH_BLOCKING` removed: streams
/// overlap, the caching allocator works as it does in production), `switch`
/// set, the hook first on `PYTHONPATH`. It watches PyTorch, so it does not
/// apply to a program that is not Python; `watches` says what it would have
/// read ("CSAN watches PyTorch's tensors").
pub fn stage_command(ctx: &StageContext<'_>, switch: (&str, &str), watches: &str) -> StageCommand {
    let mut command = StageCommand::program(ctx);
    command.not_applicable = (!ctx.python)
        .then(|| format!("not applicable: {watches}, and this is not a Python program"));
    command
        .env
        .push((switch.0.to_string(), switch.1.to_string()));
    command
        .env
        .extend(env(ctx.run_dir, ctx.stage_dir, ctx.pythonpath.clone()));
    command.env_remove.push("CUDA_LAUNCH_BLOCKING".into());
    command
}

/// A stage that watches Python from inside, planned as not applicable
/// because the command did not look like Python (`make train`, `srun ...`,
/// a launcher cudawatch does not know, a script that starts `$PYTHON`),
/// applies after all when the plain run saw a Python process of the
/// program's tree on a GPU: what ran decides, not the command line.
pub fn applies_if_python_ran(command: &mut StageCommand, plain: &StageRecord) {
    if command.not_applicable.is_some()
        && plain
            .gpu_processes
            .iter()
            .any(|p| p.executable.starts_with("python"))
    {
        command.not_applicable = None;
    }
}

/// The variable that names the stage's folder, where the hook writes.
const HOOK_OUT: &str = "CUDAWATCH_HOOK_OUT";

/// `env` (a stage's) with the hook writing into `out` instead, absolute
/// (the program may change directory): a follow-up that runs the program
/// again keeps its hook's word apart from the stage's.
pub fn writing_to(env: &[(String, String)], out: &Path) -> Vec<(String, String)> {
    let out = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    let mut env: Vec<(String, String)> =
        env.iter().filter(|(k, _)| k != HOOK_OUT).cloned().collect();
    env.push((HOOK_OUT.into(), out.display().to_string()));
    env
}

/// The variable that tells the hook to turn PyTorch's deterministic mode
/// on, whose `fill_uninitialized_memory` writes every new tensor
/// (initcheck's rerun, `tools::sanitizer::tensors_filled`).
pub const FILL_TENSORS: &str = "CUDAWATCH_FILL_TENSORS";

/// The variable that tells the hook to end the program after that many
/// optimizer steps (`--steps`).
pub const STOP_AFTER_STEPS: &str = "CUDAWATCH_STOP_AFTER_STEPS";

/// Set beside [`STOP_AFTER_STEPS`] when the steps are the stage kind's
/// default (`StageKind::first_steps`), not the user's `--steps`.
pub const STEPS_BY_DEFAULT: &str = "CUDAWATCH_STEPS_BY_DEFAULT";

/// Makes a Python stage's program end after its first `steps` optimizer
/// steps (`torch.optim`), the hook on `PYTHONPATH` if the stage did not put
/// it there already: a training script of hours is checked on its first
/// steps. `by_default`: the stage kind chose them, not the user.
pub fn stop_after_steps(
    command: &mut StageCommand,
    ctx: &StageContext<'_>,
    steps: u32,
    by_default: bool,
) {
    with_hook(command, ctx, (STOP_AFTER_STEPS, &steps.to_string()));
    if by_default {
        command.env.push((STEPS_BY_DEFAULT.into(), "1".into()));
    }
}

/// Lets a stage run the program to its end after all (the memory stage,
/// once the plain run ran out of memory at a later step than its own).
pub fn run_whole(command: &mut StageCommand) {
    command
        .env
        .retain(|(k, _)| k != STOP_AFTER_STEPS && k != STEPS_BY_DEFAULT);
}

/// Whether `--steps` could have shortened a finished stage: the hook was in
/// it (a Python program's tool stage) and no step limit was.
pub fn steps_would_shorten(record: &super::StageRecord) -> bool {
    let set = |name| super::env_value(&record.env, name).is_some();
    set(HOOK_OUT) && !set(STOP_AFTER_STEPS)
}

/// The variable that tells the hook to keep cuDNN's benchmark mode off.
pub const CUDNN_BENCHMARK_OFF: &str = "CUDAWATCH_CUDNN_BENCHMARK_OFF";

/// Keeps cuDNN's benchmark mode off in a tool stage of a Python program,
/// whatever the program asks: cuDNN would time every candidate algorithm
/// of each convolution under the tool (a ResNet-18 step with
/// `cudnn.benchmark = True`: racecheck and ncu past 300 s, against about
/// 50 and 60 without), and timings under a tool say nothing.
pub fn cudnn_benchmark_off(command: &mut StageCommand, ctx: &StageContext<'_>) {
    with_hook(command, ctx, (CUDNN_BENCHMARK_OFF, "1"));
}

/// The hook on the stage's `PYTHONPATH` (once), and `order` for it.
fn with_hook(command: &mut StageCommand, ctx: &StageContext<'_>, order: (&str, &str)) {
    if !uses_hook(command) {
        command
            .env
            .extend(env(ctx.run_dir, ctx.stage_dir, ctx.pythonpath.clone()));
    }
    command.env.push((order.0.to_string(), order.1.to_string()));
}

/// Whether a stage's command puts the hook on `PYTHONPATH` (the run then
/// writes it into its `hook/` folder).
pub fn uses_hook(command: &StageCommand) -> bool {
    command.env.iter().any(|(key, _)| key == HOOK_OUT)
}

/// What a stage that watches the program from inside needs of each process
/// that used a GPU (`processes.jsonl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// torch loaded with the hook in it (the memory hook).
    Torch,
    /// torch loaded with CSAN on (the csan stage).
    TorchWithCsan,
}

/// A clean verdict of a stage that watches the program from inside
/// (`instrument`: CSAN, the memory hook) stands only if it watched every
/// process the supervisor saw using a GPU (`processes.jsonl` against
/// `StageRecord::gpu_processes`): a worker whose launcher cleared its
/// environment, a `python -E`, or a GPU process without torch ran
/// unwatched, and the stage is then inconclusive, naming it.
pub fn every_gpu_process_watched(
    judged: (Outcome, String),
    stage_dir: &Path,
    record: &StageRecord,
    (instrument, needs): (&str, Watch),
) -> (Outcome, String) {
    if judged.0 != Outcome::Clean {
        return judged;
    }
    let nonce = super::env_value(&record.env, HOOK_NONCE);
    let lines = hook_lines(stage_dir, needs, nonce);
    // The hook writes a line in every Python process it starts in: none of
    // this stage's (the file gone, or lines without its nonce: stale,
    // copied, written by hand) and nothing shows it watched at all.
    if nonce.is_some() && lines.started.is_empty() {
        return (
            Outcome::Inconclusive,
            format!(
                "cudawatch's hook left no line of this stage's (processes.jsonl is missing, or \
                 its lines do not carry the stage's nonce), so nothing shows {instrument} \
                 watched the program; of what it printed: {}",
                judged.1
            ),
        );
    }
    if record.gpu_processes.is_empty() {
        return fewer_than_the_plain_run(judged, stage_dir, &lines.cuda, instrument);
    }
    let HookLines {
        started, watched, ..
    } = lines;
    let mut without_hook: Vec<String> = Vec::new();
    let mut unwatched: Vec<String> = Vec::new();
    for process in &record.gpu_processes {
        let named = process.reference().describe();
        let list = if !started.contains(&process.pid) {
            &mut without_hook
        } else if !watched.contains(&process.pid) {
            &mut unwatched
        } else {
            continue;
        };
        if !list.contains(&named) {
            list.push(named);
        }
    }
    let mut why = Vec::new();
    if !without_hook.is_empty() {
        why.push(format!(
            "{} used the GPU without cudawatch's hook (a launcher that cleared its \
             environment, or python -E/-I/-S)",
            without_hook.join(", ")
        ));
    }
    if !unwatched.is_empty() {
        why.push(format!(
            "{} used the GPU without {instrument} on in its torch",
            unwatched.join(", ")
        ));
    }
    if why.is_empty() {
        return judged;
    }
    (
        Outcome::Inconclusive,
        format!(
            "{}, so {instrument} did not watch it; of the other processes: {}",
            why.join("; "),
            judged.1
        ),
    )
}

/// A stage whose GPU sampler saw no process (a worker shorter than its
/// interval, a container whose nvidia-smi lists none) has only the hook's
/// word for what used CUDA: fewer such processes than the plain run had
/// on the GPU, and it cannot vouch. "Saw nothing" is not "nothing there".
fn fewer_than_the_plain_run(
    judged: (Outcome, String),
    stage_dir: &Path,
    used_cuda: &std::collections::BTreeSet<u32>,
    instrument: &str,
) -> (Outcome, String) {
    let plain = stage_dir
        .parent()
        .map(|run| {
            run.join(cudawatch_model::Tool::Plain.name())
                .join("stage.json")
        })
        .and_then(|path| crate::safe_files::read_at_most(&path, 16 << 20).ok())
        .and_then(|bytes| serde_json::from_slice::<StageRecord>(&bytes).ok());
    let Some(plain) = plain else {
        return judged;
    };
    let mut plain_pids: Vec<u32> = plain.gpu_processes.iter().map(|p| p.pid).collect();
    plain_pids.sort_unstable();
    plain_pids.dedup();
    if plain_pids.len() <= used_cuda.len() {
        return judged;
    }
    (
        Outcome::Inconclusive,
        format!(
            "the GPU sampler saw none of this stage's processes, and cudawatch's hook names {} \
             that used CUDA where the plain run had {} on the GPU, so {instrument} may not have \
             watched them all; of those it did: {}",
            used_cuda.len(),
            plain_pids.len(),
            judged.1
        ),
    )
}

/// What the hook's lines say (`processes.jsonl`): the pids it started in,
/// those it watched as a stage needs, and those that used CUDA.
struct HookLines {
    started: std::collections::BTreeSet<u32>,
    watched: std::collections::BTreeSet<u32>,
    cuda: std::collections::BTreeSet<u32>,
}

/// The pids the hook started in, those it watched as `needs` asks and
/// those that used CUDA (`processes.jsonl`, read bounded). A stage given a
/// nonce counts only the lines that carry it (a run directory from before
/// nonces has none, and is read as it was written).
fn hook_lines(stage_dir: &Path, needs: Watch, nonce: Option<&str>) -> HookLines {
    let bytes = crate::safe_files::read(&stage_dir.join("processes.jsonl")).unwrap_or_default();
    let (mut started, mut watched, mut cuda) =
        (Default::default(), Default::default(), Default::default());
    for line in String::from_utf8_lossy(&bytes).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(pid) = v["pid"].as_u64().and_then(|p| u32::try_from(p).ok()) else {
            continue;
        };
        if nonce.is_some_and(|n| v["nonce"].as_str() != Some(n)) {
            continue;
        }
        let set: &mut std::collections::BTreeSet<u32> = if v["hook"] == "start" {
            &mut started
        } else if v["cuda"] == true {
            &mut cuda
        } else if v["torch"] == true && (needs == Watch::Torch || v["csan"] == true) {
            &mut watched
        } else {
            continue;
        };
        set.insert(pid);
    }
    HookLines {
        started,
        watched,
        cuda,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hooks_paths_are_absolute_so_a_program_may_change_directory() {
        let set = env(
            Path::new("cudawatch-runs/x"),
            Path::new("cudawatch-runs/x/memory"),
            None,
        );
        for (key, value) in set.iter().filter(|(key, _)| key != HOOK_NONCE) {
            assert!(value.starts_with('/'), "{key}={value}");
        }
    }

    #[test]
    fn the_hook_goes_first_on_the_users_pythonpath() {
        let set = env(Path::new("/r"), Path::new("/r/csan"), Some("/site".into()));
        assert!(set.contains(&("PYTHONPATH".into(), "/r/hook:/site".into())));
        assert!(set.contains(&("CUDAWATCH_HOOK_OUT".into(), "/r/csan".into())));
        let set = env(Path::new("/r"), Path::new("/r/csan"), None);
        assert!(set.contains(&("PYTHONPATH".into(), "/r/hook".into())));
    }
}
