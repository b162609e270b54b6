//! PyTorch's CUDA sanitizer (CSAN): how the csan stage runs the program.
//! The program runs as it does for real (streams overlap only without
//! `CUDA_LAUNCH_BLOCKING`), with `TORCH_CUDA_SANITIZER=1`, and cudawatch's
//! Python hook first on `PYTHONPATH`, to say at exit whether torch was
//! imported and CSAN was really on (CSAN prints nothing when it finds
//! nothing).

use cudawatch_model::{Outcome, ProcessEnd, Tool};
use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::csan::OwnFailure;
use cudawatch_parsers::memory::HookFacts;

use super::outcome::{describe_end, process_problem};
use super::{StageCommand, StageContext, StageFiles, StageJudged, StageKind, StageRecord};
use crate::words::plural;

/// CSAN's kind.
pub struct Csan;

impl StageKind for Csan {
    /// PyTorch's instrument holds what the program holds.
    fn gpu_need_mib(&self, _tool: Tool, peak: u64) -> u64 {
        super::with_margin(peak, 1.1, 512)
    }

    fn relative_cost(&self, _tool: Tool) -> u32 {
        2
    }

    /// Two steps: the streams' order of a training step, and the
    /// optimizer's first update on state the first step made.
    fn first_steps(&self, _tool: Tool) -> Option<u32> {
        Some(2)
    }

    fn command(&self, ctx: &StageContext<'_>) -> StageCommand {
        super::hook::stage_command(
            ctx,
            ("TORCH_CUDA_SANITIZER", "1"),
            "CSAN watches PyTorch's tensors",
        )
    }

    fn after_plain(&self, command: &mut StageCommand, plain: &StageRecord) {
        super::hook::applies_if_python_ran(command, plain);
        super::plain::blocked_by_hang(command, plain);
    }

    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged {
        let output = files.program_output();
        // Each race with the rank that printed it (torchrun's prefixes),
        // completed from the processes the stage saw.
        let mut sites = cudawatch_parsers::csan::parse_output(&output);
        super::ranks::attribute(&mut sites, record);
        let races = builder.csan_sites(&files.rel("stderr"), sites);
        // What the hook saw at the program's exit; absent when it could
        // not run or the program never got to exit.
        let hook = crate::safe_files::read(&files.path("hook.json"))
            .ok()
            .and_then(|b| cudawatch_parsers::memory::hook_facts(&b).ok());
        let own = cudawatch_parsers::csan::own_failure(&output);
        let judged = crate::tools::hook::every_gpu_process_watched(
            rule(record, races, hook.as_ref(), own.as_ref()),
            files.dir(),
            record,
            ("CSAN", crate::tools::hook::Watch::TorchWithCsan),
        );
        StageJudged::of_program(judged, record)
    }
}

/// Why a run under CSAN that ended early checked only up to there: CSAN
/// failing inside itself is said as CSAN's failure, at the user's line it
/// failed on, not as the program's.
fn ended_early(record: &StageRecord, own: Option<&OwnFailure>) -> String {
    let Some(own) = own else {
        return format!(
            "the program {} under CSAN with no race reported: checked only up to there",
            describe_end(record.end)
        );
    };
    let at = own
        .user_frame
        .as_ref()
        .and_then(|f| {
            let file = std::path::Path::new(f.file.as_deref()?).file_name()?;
            Some(format!(" at {}:{}", file.to_string_lossy(), f.line?))
        })
        .unwrap_or_default();
    let exception: String = own.exception.chars().take(200).collect();
    format!(
        "CSAN itself failed{at} ({exception}, raised in torch/cuda/_sanitizer.py), and the \
         program {} with it: checked only up to there; the other stages ran without CSAN",
        describe_end(record.end)
    )
}

/// What CSAN cannot see, said with every verdict of its stage.
const CSAN_BLIND_SPOTS: &str = "CSAN sees PyTorch's operators on PyTorch's streams: not the \
     arguments of custom kernels (CuPy, Triton, extensions), nor streams PyTorch does not know";

/// What CSAN could not see in this run: its blind spots, the CUDA graphs
/// the hook counted (their operators only recorded while captured, then
/// run by replays that CSAN never sees), and the program's torch.compile
/// calls (run as eager operators under CSAN: Dynamo compiles nothing while
/// a dispatch mode is on).
fn blind_spots(hook: Option<&HookFacts>) -> String {
    let mut said = CSAN_BLIND_SPOTS.to_string();
    let Some(hook) = hook else {
        return said;
    };
    if hook.csan_captured_ops + hook.csan_graph_replays > 0 {
        said.push_str(&format!(
            ", nor inside CUDA graphs: {} captured and {} not checked",
            plural(hook.csan_captured_ops, "operator"),
            plural(hook.csan_graph_replays, "replay")
        ));
    }
    if hook.csan_unfollowed_args > 0 {
        said.push_str(&format!(
            ", nor {} of a layout without storage that cudawatch could not follow",
            plural(hook.csan_unfollowed_args, "operator argument")
        ));
    }
    if hook.csan_sparse_args > 0 {
        said.push_str(&format!(
            "; sparse tensors ({}), which CSAN alone cannot book (it stops the program), were \
             booked by cudawatch's hook as their indices and values",
            plural(hook.csan_sparse_args, "operator argument")
        ));
    }
    if hook.csan_compile_calls > 0 {
        said.push_str(&format!(
            "; the program's torch.compile ({}) ran as eager operators under CSAN, which \
             Dynamo does not compile under: CSAN checked those operators, not Inductor's kernels",
            plural(hook.csan_compile_calls, "call")
        ));
    }
    said
}

/// The CSAN stage: the program run with `TORCH_CUDA_SANITIZER=1`. CSAN
/// prints nothing when it finds nothing, so silence is clean only when the
/// hook saw, at the program's normal exit, that CSAN was on. `own` is CSAN
/// failing inside itself, which ended the program.
pub fn rule(
    record: &StageRecord,
    races: usize,
    hook: Option<&HookFacts>,
    own: Option<&OwnFailure>,
) -> (Outcome, String) {
    if let Some(why) = &record.not_applicable {
        return (Outcome::Skipped, why.clone());
    }
    if let Some(problem) = process_problem(record, "the program under CSAN", "") {
        return problem;
    }
    let blind = blind_spots(hook);
    if races > 0 {
        return (
            Outcome::Findings,
            format!(
                "CSAN reported {} ({blind})",
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
            format!(
                "not applicable: the program never imported torch{}, and CSAN watches PyTorch's \
                 tensors",
                crate::tools::xla::imported_instead(hook)
            ),
        );
    }
    if hook.cuda_used == Some(false) {
        return (
            Outcome::Skipped,
            "not applicable: the program imported torch but never used CUDA, so it had no \
             stream to race on"
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
        return (Outcome::Inconclusive, ended_early(record, own));
    }
    (
        Outcome::Clean,
        format!(
            "CSAN (torch {torch}) watched every operator the program ran and reported no race ({blind})"
        ),
    )
}
