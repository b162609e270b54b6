//! The memory stage: the program run as it runs for real (no
//! `CUDA_LAUNCH_BLOCKING`, the caching allocator on) with cudawatch's
//! Python hook recording PyTorch's allocator history with Python stacks,
//! its state at each out-of-memory error (PyTorch's OOM observer), after
//! each optimizer step and at exit (`env.rs`). Right after the stage, the
//! processes its OOM message names are looked up; when an OOM came from
//! fragmentation, the program runs once more with
//! `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, to show whether
//! that remedy helps (`artifacts.rs` reads both back). When it vouches:
//! `rules.rs`.

mod artifacts;
mod env;
mod rules;

use std::path::Path;

use cudawatch_model::Tool;
use cudawatch_parsers::builder::ReportBuilder;

use super::{
    FollowUp, FollowUpContext, StageCommand, StageContext, StageFiles, StageJudged, StageKind,
    StageRecord,
};

pub use artifacts::{expandable_dir, expandable_outcome, hook_artifacts, oom_files};
pub use env::{cap_env, expandable_env};
pub use rules::rule;

/// The memory stage's kind.
pub struct Memory;

/// The steps the memory stage runs of a training loop by default.
pub const MEMORY_STEPS: u32 = 16;

impl Memory {
    /// The stage's program once more with PyTorch's expandable segments,
    /// when a recorded out-of-memory error looks like fragmentation; once.
    fn rerun(&self, stage: &FollowUpContext<'_>, started: &[String]) -> Option<FollowUp> {
        if started.iter().any(|d| d == "expandable") {
            return None;
        }
        let fragmented = oom_files(stage.stage_dir).iter().any(|path| {
            crate::safe_files::read(path).is_ok_and(|b| cudawatch_parsers::memory::fragmented(&b))
        });
        if !fragmented {
            return None;
        }
        let dir = expandable_dir(stage.stage_dir);
        Some(FollowUp {
            name: "expandable".into(),
            argv: stage.command.argv.clone(),
            env: expandable_env(&stage.command.env, stage.stage_dir),
            env_remove: stage.command.env_remove.clone(),
            stdout: dir.join("stdout"),
            stderr: dir.join("stderr"),
            timeout: None,
        })
    }
}

impl StageKind for Memory {
    /// PyTorch's allocator history holds what the program holds.
    fn gpu_need_mib(&self, _tool: Tool, peak: u64) -> u64 {
        super::with_margin(peak, 1.1, 512)
    }

    fn relative_cost(&self, _tool: Tool) -> u32 {
        2
    }

    /// Sixteen steps: growth is judged after two steps of warm-up over at
    /// least five more (`parsers::memory`), and the hook keeps the live
    /// memory by line at steps 2, 4, 8 and 16.
    fn first_steps(&self, _tool: Tool) -> Option<u32> {
        Some(MEMORY_STEPS)
    }

    fn command(&self, ctx: &StageContext<'_>) -> StageCommand {
        super::hook::stage_command(
            ctx,
            ("CUDAWATCH_MEMORY", "1"),
            "the memory stage reads PyTorch's allocator",
        )
    }

    fn after_plain(&self, command: &mut StageCommand, plain: &StageRecord) {
        super::hook::applies_if_python_ran(command, plain);
        super::plain::blocked_by_hang(command, plain);
        // What held the memory at the plain run's out-of-memory error is
        // this stage's to say, at whatever step it came.
        if plain.out_of_memory_at.is_some() {
            super::hook::run_whole(command);
        }
    }

    fn after_stage(&self, stage_dir: &Path) {
        // Now, while they may still run: a PID alone names nobody.
        artifacts::name_other_processes(stage_dir);
    }

    fn follow_ups(
        &self,
        stage: &FollowUpContext<'_>,
        started: &[String],
        _finished: &[String],
    ) -> Vec<FollowUp> {
        self.rerun(stage, started).into_iter().collect()
    }

    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged {
        let (hook, ooms) = hook_artifacts(files.dir());
        let steps = files.read("steps.jsonl");
        let peaks = files.read("peaks.jsonl");
        let stderr = files.read_program("stderr");
        let found = hook.is_some() || !ooms.is_empty();
        let memory = found.then(|| {
            let expandable = expandable_outcome(files.dir(), record);
            let commands = crate::safe_files::read(&files.path("processes.json"))
                .map(|b| cudawatch_parsers::memory::process_commands(&b))
                .unwrap_or_default();
            builder.memory(
                &files.rel("hook.json"),
                cudawatch_parsers::memory::Artifacts {
                    hook: hook.as_ref().cloned().unwrap_or_default(),
                    ooms: &ooms,
                    steps: &steps,
                    peaks: &peaks,
                    program_output: &String::from_utf8_lossy(&stderr),
                    commands: &commands,
                },
                expandable,
            )
        });
        let mut judged = rule(record, hook.as_ref(), memory.as_ref());
        if judged.0 == cudawatch_model::Outcome::Clean
            && let Some(why) = hook
                .as_ref()
                .and_then(|h| rules::damaged_step_records(&steps, &peaks, h))
        {
            judged = (
                cudawatch_model::Outcome::Inconclusive,
                format!("{why}: the step records were damaged, so growth cannot be judged"),
            );
        }
        let judged = crate::tools::hook::every_gpu_process_watched(
            judged,
            files.dir(),
            record,
            ("the memory hook", crate::tools::hook::Watch::Torch),
        );
        StageJudged::of_program(judged, record)
    }
}
