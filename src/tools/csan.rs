//! PyTorch's CUDA sanitizer (CSAN): how the csan stage runs the program.
//! The program runs as it does for real (streams overlap only without
//! `CUDA_LAUNCH_BLOCKING`), with `TORCH_CUDA_SANITIZER=1`, and cudawatch's
//! Python hook first on `PYTHONPATH`, to say at exit whether torch was
//! imported and CSAN was really on (CSAN prints nothing when it finds
//! nothing).

use std::path::Path;

use cudawatch_model::{Outcome, ProcessEnd, ToolSummary};
use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::memory::HookFacts;

use super::outcome::{describe_end, process_problem};
use super::{StageCommand, StageContext, StageFiles, StageJudged, StageKind, StageRecord};
use crate::words::plural;

/// CSAN's kind.
pub struct Csan;

impl StageKind for Csan {
    fn command(&self, ctx: &StageContext<'_>) -> StageCommand {
        let mut command = StageCommand::program(ctx);
        command.not_applicable = not_applicable(ctx.python);
        let (set, remove) = env(ctx.run_dir, ctx.stage_dir, ctx.pythonpath.clone());
        command.env.extend(set);
        command.env_remove.extend(remove);
        command
    }

    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged {
        let mut output = files.read("stderr");
        output.extend(files.read("stdout"));
        let races = builder.csan(&files.rel("stderr"), &output);
        // What the hook saw at the program's exit; absent when it could
        // not run or the program never got to exit.
        let hook = crate::safe_files::read(&files.path("hook.json"))
            .ok()
            .and_then(|b| cudawatch_parsers::memory::hook_facts(&b).ok());
        let (outcome, reason) = rule(record, races, hook.as_ref());
        // The program failed under CSAN: when that failure is already a
        // finding (the plain run's assert), the stage is blocked by it, as
        // a sanitizer stage stopped by the same assert is.
        StageJudged {
            outcome,
            reason,
            summary: ToolSummary {
                target_failed: !matches!(
                    record.end,
                    ProcessEnd::Exited(0) | ProcessEnd::NotStarted
                ),
                ..ToolSummary::default()
            },
        }
    }
}

/// Why the stage does not apply, decided before running: CSAN watches
/// PyTorch's tensors, so only a Python program can have any.
pub fn not_applicable(python: bool) -> Option<String> {
    (!python).then(|| {
        "not applicable: CSAN watches PyTorch's tensors, and this is not a Python program".into()
    })
}

/// The variables to set and to remove for the stage whose folder is
/// `stage_dir`, given the user's `PYTHONPATH`.
pub fn env(
    run_dir: &Path,
    stage_dir: &Path,
    pythonpath: Option<String>,
) -> (Vec<(String, String)>, Vec<String>) {
    let mut set = vec![("TORCH_CUDA_SANITIZER".into(), "1".into())];
    set.extend(super::hook::env(run_dir, stage_dir, pythonpath));
    (set, vec!["CUDA_LAUNCH_BLOCKING".into()])
}

/// What CSAN cannot see, said with every verdict of its stage.
const CSAN_BLIND_SPOTS: &str = "CSAN sees PyTorch's operators on PyTorch's streams: not the \
     arguments of custom kernels (CuPy, Triton, extensions), nor streams PyTorch does not know";

/// The CSAN stage: the program run with `TORCH_CUDA_SANITIZER=1`. CSAN
/// prints nothing when it finds nothing, so silence is clean only when the
/// hook saw, at the program's normal exit, that CSAN was on.
pub fn rule(record: &StageRecord, races: usize, hook: Option<&HookFacts>) -> (Outcome, String) {
    if let Some(why) = &record.not_applicable {
        return (Outcome::Skipped, why.clone());
    }
    if let Some(problem) = process_problem(record, "the program under CSAN", "") {
        return problem;
    }
    if races > 0 {
        return (
            Outcome::Findings,
            format!(
                "CSAN reported {} ({CSAN_BLIND_SPOTS})",
                plural(races as u64, "race site")
            ),
        );
    }
    let Some(hook) = hook else {
        return (
            Outcome::Inconclusive,
            format!(
                "cudawatch's Python hook did not report ({}; CUDAWATCH_NO_HOOK set, a Python it \
                 cannot run in, or no normal exit), so CSAN's silence proves nothing",
                describe_end(record.end)
            ),
        );
    };
    if !hook.torch_imported {
        return (
            Outcome::Skipped,
            "not applicable: the program never imported torch, and CSAN watches PyTorch's tensors"
                .into(),
        );
    }
    let torch = hook.torch_version.as_deref().unwrap_or("?");
    match hook.csan_enabled {
        Some(true) => {}
        Some(false) => {
            return (
                Outcome::Inconclusive,
                format!("torch {torch} ignored TORCH_CUDA_SANITIZER=1: CSAN was off"),
            );
        }
        None => {
            return (
                Outcome::Inconclusive,
                format!(
                    "torch {torch} has no CSAN that cudawatch can see (torch.cuda._sanitizer): \
                     nothing was checked"
                ),
            );
        }
    }
    if record.end != ProcessEnd::Exited(0) {
        return (
            Outcome::Inconclusive,
            format!(
                "the program {} under CSAN with no race reported: checked only up to there",
                describe_end(record.end)
            ),
        );
    }
    (
        Outcome::Clean,
        format!(
            "CSAN (torch {torch}) watched the whole run and reported no race ({CSAN_BLIND_SPOTS})"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csan_runs_without_launch_blocking() {
        let (set, remove) = env(Path::new("/r"), Path::new("/r/csan"), None);
        assert!(set.contains(&("TORCH_CUDA_SANITIZER".into(), "1".into())));
        assert_eq!(remove, ["CUDA_LAUNCH_BLOCKING"]);
    }
}
