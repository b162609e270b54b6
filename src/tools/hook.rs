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
    ]
}

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

/// The variable that names the stage's folder, where the hook writes.
const HOOK_OUT: &str = "CUDAWATCH_HOOK_OUT";

/// The variable that tells the hook to end the program after that many
/// optimizer steps (`--steps`).
pub const STOP_AFTER_STEPS: &str = "CUDAWATCH_STOP_AFTER_STEPS";

/// Makes a Python stage's program end after its first `steps` optimizer
/// steps (`torch.optim`), the hook on `PYTHONPATH` if the stage did not put
/// it there already: a training script of hours is checked on its first
/// steps in every stage, each stage on the same steps.
pub fn stop_after_steps(command: &mut StageCommand, ctx: &StageContext<'_>, steps: u32) {
    with_hook(command, ctx, (STOP_AFTER_STEPS, &steps.to_string()));
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

/// A clean verdict of a stage that watches the program from inside
/// (`instrument`: CSAN, the memory hook) stands only if the hook ran in
/// every process the supervisor saw using a GPU (`processes.jsonl` against
/// `StageRecord::gpu_processes`): a worker whose launcher cleared its
/// environment, or a `python -E`, ran unwatched, and the stage is then
/// inconclusive, naming it.
pub fn every_gpu_process_watched(
    judged: (Outcome, String),
    stage_dir: &Path,
    record: &StageRecord,
    instrument: &str,
) -> (Outcome, String) {
    if judged.0 != Outcome::Clean || record.gpu_processes.is_empty() {
        return judged;
    }
    let started = started_pids(stage_dir);
    let mut unwatched: Vec<String> = Vec::new();
    for process in &record.gpu_processes {
        let named = process.reference().describe();
        if !started.contains(&process.pid) && !unwatched.contains(&named) {
            unwatched.push(named);
        }
    }
    if unwatched.is_empty() {
        return judged;
    }
    (
        Outcome::Inconclusive,
        format!(
            "{} used the GPU without cudawatch's hook (a launcher that cleared its environment,              or python -E/-I/-S), so {instrument} did not watch it; what it says of the other              processes: {}",
            unwatched.join(", "),
            judged.1
        ),
    )
}

/// The pids the hook started in (`processes.jsonl`, read bounded).
fn started_pids(stage_dir: &Path) -> std::collections::BTreeSet<u32> {
    let bytes = crate::safe_files::read(&stage_dir.join("processes.jsonl")).unwrap_or_default();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["hook"] == "start")
        .filter_map(|v| v["pid"].as_u64().and_then(|p| u32::try_from(p).ok()))
        .collect()
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
        for (key, value) in &set {
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
