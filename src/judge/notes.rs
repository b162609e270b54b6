//! What cudawatch did on purpose that a reader should know, said as the
//! report's notes rather than its warnings: a warning limits trust in the
//! report (and the clean verdict says "with 1 warning"), a note does not.

use cudawatch_model::{Report, StepsCovered, Tool, Warning};

/// The note of a run whose sanitizers ran with PyTorch's caching allocator
/// off (`tools::sanitizer::allocator_off`): they then saw one allocation
/// per tensor.
pub const ALLOCATOR_OFF: &str = "PyTorch's caching allocator was turned off under the sanitizers \
                                 (PYTORCH_NO_CUDA_MEMORY_CACHING=1): it hides out-of-bounds \
                                 accesses inside its blocks";

/// Where the allocator note came from.
pub const ALLOCATOR_OFF_SOURCE: &str = "sanitizers";

/// The note of a run whose program turns cuDNN's benchmark mode on where
/// the tool stages kept it off (`tools::hook::cudnn_benchmark_off`).
pub fn cudnn_benchmark_off() -> Warning {
    Warning {
        source: "cuDNN".into(),
        message: "the program turns cuDNN's benchmark mode on \
                  (torch.backends.cudnn.benchmark); the tool stages kept it off, so cuDNN \
                  chose its algorithms by its heuristics instead of timing every candidate \
                  under the tool: a convolution kernel that only benchmark mode would pick \
                  was not checked there"
            .into(),
    }
}

/// The note of a JAX program's run whose tool stages ran XLA with the
/// settings of `tools::xla::settle`.
pub fn xla_under_tools() -> Warning {
    Warning {
        source: "JAX".into(),
        message: "XLA ran without its GEMM autotuner under the sanitizers and ncu \
                  (--xla_gpu_autotune_level=0: with it, compute-sanitizer 2025.3.1 died of \
                  SIGSEGV in every run), so XLA chose its matrix-product kernels by its \
                  heuristics and a kernel only the autotuner would pick was not checked; the \
                  sanitizers' XLA compiled on one thread (with several, compute-sanitizer \
                  still died in half the runs under load); ncu \
                  ran without XLA's command buffers (CUDA graphs); no stage preallocated 75% \
                  of the GPU, and under the sanitizers each buffer was its own allocation \
                  (XLA_PYTHON_CLIENT_ALLOCATOR=platform), since XLA's pool hides \
                  out-of-bounds accesses inside its regions"
            .into(),
    }
}

/// What a launcher of several processes changed in the stages that ran
/// (`plan::for_several_processes`).
#[derive(Debug, Clone, Default)]
pub struct LauncherChanges {
    /// The plain run ran, without `CUDA_LAUNCH_BLOCKING`.
    pub plain_ran: bool,
    /// ncu ran without NCCL's kernels.
    pub ncu_left_out_nccl: bool,
    /// The sanitizer stages that ran each rank under its own
    /// compute-sanitizer.
    pub per_rank: Vec<&'static str>,
    /// Those that ran one around the launcher.
    pub around_launcher: Vec<&'static str>,
}

/// The notes of a program started by a launcher of several processes: the
/// plain run without `CUDA_LAUNCH_BLOCKING`, ncu without NCCL's kernels,
/// one compute-sanitizer per rank.
pub fn several_processes(launcher: &str, changes: LauncherChanges) -> Vec<Warning> {
    let mut notes = Vec::new();
    if changes.plain_ran {
        notes.push(Warning {
            source: launcher.into(),
            message: format!(
                "the plain run left CUDA_LAUNCH_BLOCKING unset for {launcher}'s workers: with it, \
                 a two-rank NCCL program whose ranks disagree on a collective hung past 200 s \
                 where without it NCCL's watchdog ended it at the process group's timeout \
                 (measured on two H100s), so an asynchronous CUDA error may surface at a later \
                 call than the one that caused it (memcheck's stage places it)"
            ),
        });
    }
    if !changes.per_rank.is_empty() {
        let around = if changes.around_launcher.is_empty() {
            String::new()
        } else {
            format!(
                "; {} ran one around the launcher, where the flood watch can stop their \
                 floods of library records early, so their records name no rank",
                changes.around_launcher.join(" and ")
            )
        };
        notes.push(Warning {
            source: "sanitizers".into(),
            message: format!(
                "{} ran each of {launcher}'s workers under a compute-sanitizer of its own \
                 ({launcher} started it through a script in the stage's folder, as its \
                 PYTHON_EXEC), so their records name their rank{around}",
                changes.per_rank.join(" and ")
            ),
        });
    }
    if changes.ncu_left_out_nccl {
        notes.push(Warning {
            source: "ncu".into(),
            message: "ncu left NCCL's kernels out: it serializes kernel launches across the \
                      program's processes, and a collective's kernel waits for its peers', so \
                      profiling them hangs; communication kernels were not checked for \
                      coalescing"
                .into(),
        });
    }
    notes
}

/// What the stages' hooks saw of `--steps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepsSeen {
    /// A hook ended the program there (or no hook reported either way).
    Ended,
    /// The program never imported torch, whose steps `--steps` counts.
    NoTorch,
    /// The program ended before that step in every stage.
    TooFew,
}

/// The note of a run whose tool stages checked a loop's first steps only
/// (`plan::Coverage::FirstSteps`), from what each stage's hook ended:
/// which stages saw how many steps, and what that leaves to the plain run.
/// None when no hook ended the program (a program without a loop, or one
/// shorter than the stages' steps, ran whole in every stage).
pub fn first_steps(covered: &[(Tool, StepsCovered)]) -> Option<Warning> {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (tool, steps) in covered {
        let words = match steps.words().strip_prefix("its first ") {
            Some(rest) if steps.count == 1 => format!("1 {rest}"),
            Some(rest) => rest.to_string(),
            None => steps.words(),
        };
        match groups.iter_mut().find(|(w, _)| *w == words) {
            Some((_, tools)) => tools.push(tool.name()),
            None => groups.push((words, vec![tool.name()])),
        }
    }
    if groups.is_empty() {
        return None;
    }
    let list: Vec<String> = groups
        .iter()
        .map(|(words, tools)| format!("{}: {words}", tools.join(", ")))
        .collect();
    Some(Warning {
        source: FIRST_STEPS_SOURCE.into(),
        message: format!(
            "the plain run ran the program to its end; the tool stages ended it after their \
             first steps ({}), whose kernels every later step launches again: what only a later \
             step does (an index or a shape that first appears there) was checked by the plain \
             run alone (--whole-program runs every step under every tool)",
            list.join("; ")
        ),
    })
}

/// What ncu's filter left out of its profile, for [`left_out_by_name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcuLeftOut {
    /// Nothing by name (or ncu did not profile).
    Nothing,
    /// PyTorch's own kernels (a run from before 2026-11-29).
    Pytorchs,
    /// PyTorch's and the libraries' but their Hopper and Blackwell ones.
    PytorchsAndLibraries,
}

/// The note of a run whose stages left kernels out by name: `sanitizers`,
/// those that left library kernels out (racecheck and synccheck PyTorch's
/// too, initcheck the libraries' alone); `ncu`, what ncu left out. None
/// when none did.
pub fn left_out_by_name(sanitizers: &[Tool], ncu: NcuLeftOut) -> Option<Warning> {
    let initcheck = sanitizers.contains(&Tool::Initcheck);
    let whole: Vec<&str> = sanitizers
        .iter()
        .filter(|tool| **tool != Tool::Initcheck)
        .map(|tool| tool.name())
        .collect();
    let whole_did = (!whole.is_empty()).then(|| {
        format!(
            "{} left library kernels (cuDNN, cuBLAS, CUTLASS, NCCL) and PyTorch's (ATen, \
             torchvision) out",
            crate::words::and_list(&whole)
        )
    });
    let initcheck_did = initcheck.then(|| {
        "initcheck left the libraries' kernels out, still tracking what they write".to_string()
    });
    let sanitizers_did = match (whole_did, initcheck_did) {
        (Some(whole), Some(initcheck)) => Some(format!("{whole}, {initcheck}")),
        (whole, initcheck) => whole.or(initcheck),
    };
    let ncu_did = match ncu {
        NcuLeftOut::Nothing => None,
        NcuLeftOut::Pytorchs => Some("ncu did not profile PyTorch's own kernels (ATen)"),
        NcuLeftOut::PytorchsAndLibraries => Some(
            "ncu did not profile PyTorch's own kernels (ATen, torchvision) nor the libraries' \
             but their Hopper and Blackwell ones (nvjet_*, sm90_*, sm100_*)",
        ),
    };
    let message = match (sanitizers_did, ncu_did) {
        (None, None) => return None,
        (Some(did), None) if !initcheck => format!(
            "{did}: a race or barrier error inside one is its own code and never gates \
             (--gate-scope all checks them)"
        ),
        (Some(did), None) => format!(
            "{did}: what one of them does inside its own code never gates (--gate-scope all \
             checks them)"
        ),
        (None, Some(ncu_did)) => format!(
            "{ncu_did}: their coalescing is their own code and gates only under --fail-on \
             warning or --gate-scope all, which profile them"
        ),
        (Some(did), Some(ncu_did)) => format!(
            "{did}, and {ncu_did}: what one of them does inside its own code never gates \
             (--gate-scope all checks them; ncu profiles them under --fail-on warning too)"
        ),
    };
    Some(Warning {
        source: LEFT_OUT_SOURCE.into(),
        message,
    })
}

/// The source of [`left_out_by_name`]'s note.
pub const LEFT_OUT_SOURCE: &str = "left out by name";

/// The source of [`first_steps`]'s note.
pub const FIRST_STEPS_SOURCE: &str = "first steps";

/// The note of a run with `--steps`: a chosen scope, so a note, not a
/// warning, and only where it held does it say what was left out.
pub fn steps(steps: &str, seen: StepsSeen) -> Warning {
    let message = match seen {
        StepsSeen::Ended => format!(
            "every stage ran the program up to its optimizer step {steps} (torch.optim; of \
             each optimizer, where it steps several), or, in a program that builds no \
             optimizer, its model call {steps} (a torch.nn.Module called outside any other), \
             and ended it there: what later steps do was not checked"
        ),
        StepsSeen::NoTorch => format!(
            "--steps {steps} counts PyTorch's optimizer steps and model calls, and the program \
             never imported torch: every stage ran it to its end"
        ),
        StepsSeen::TooFew => format!(
            "the program ended before its optimizer step {steps} (or, without an optimizer, its \
             model call {steps}) in every stage: every stage ran it to its end"
        ),
    };
    Warning {
        source: "--steps".into(),
        message,
    }
}

/// Moves the allocator note out of the warnings of a report written before
/// reports had notes, so a saved report reads back as a new one reads.
pub fn moved_out_of_warnings(report: &mut Report) {
    let (notes, warnings): (Vec<_>, Vec<_>) = std::mem::take(&mut report.warnings)
        .into_iter()
        .partition(|w| w.source == ALLOCATOR_OFF_SOURCE && w.message == ALLOCATOR_OFF);
    report.warnings = warnings;
    report.notes.extend(notes);
}

#[cfg(test)]
mod tests {
    use cudawatch_model::Warning;

    use super::*;

    #[test]
    fn the_note_of_kernels_left_out_names_the_stages_that_left_them_out() {
        assert!(left_out_by_name(&[], NcuLeftOut::Nothing).is_none());
        let both = left_out_by_name(
            &[Tool::Racecheck, Tool::Synccheck],
            NcuLeftOut::PytorchsAndLibraries,
        )
        .unwrap();
        assert!(
            both.message.starts_with(
                "racecheck and synccheck left library kernels (cuDNN, cuBLAS, CUTLASS, NCCL) \
                 and PyTorch's (ATen, torchvision) out, and ncu did not profile PyTorch's own \
                 kernels (ATen, torchvision) nor the libraries' but their Hopper and Blackwell \
                 ones (nvjet_*, sm90_*, sm100_*): "
            ),
            "{}",
            both.message
        );
        // A run from before ncu left the libraries out says what it did.
        let ncu = left_out_by_name(&[], NcuLeftOut::Pytorchs).unwrap();
        assert!(
            ncu.message
                .starts_with("ncu did not profile PyTorch's own kernels (ATen): "),
            "{}",
            ncu.message
        );
        let racecheck = left_out_by_name(&[Tool::Racecheck], NcuLeftOut::Nothing).unwrap();
        assert!(!racecheck.message.contains("ncu"), "{}", racecheck.message);
        // initcheck leaves the libraries' out, never PyTorch's.
        let initcheck =
            left_out_by_name(&[Tool::Racecheck, Tool::Initcheck], NcuLeftOut::Nothing).unwrap();
        assert!(
            initcheck.message.starts_with(
                "racecheck left library kernels (cuDNN, cuBLAS, CUTLASS, NCCL) and PyTorch's \
                 (ATen, torchvision) out, initcheck left the libraries' kernels out, still \
                 tracking what they write: "
            ),
            "{}",
            initcheck.message
        );
        assert!(
            !initcheck.message.contains("a race or barrier"),
            "{}",
            initcheck.message
        );
        for note in [both, ncu, racecheck, initcheck] {
            assert!(!note.message.contains("  "), "{}", note.message);
        }
    }

    #[test]
    fn only_the_allocator_note_moves_and_other_warnings_stay() {
        let mut report = Report::new("0.1.0");
        let warning = |source: &str, message: &str| Warning {
            source: source.into(),
            message: message.into(),
        };
        report.warnings = vec![
            warning("memcheck", "printed no summary line"),
            warning(ALLOCATOR_OFF_SOURCE, ALLOCATOR_OFF),
        ];
        moved_out_of_warnings(&mut report);
        assert_eq!(
            report.warnings,
            vec![warning("memcheck", "printed no summary line")]
        );
        assert_eq!(
            report.notes,
            vec![warning(ALLOCATOR_OFF_SOURCE, ALLOCATOR_OFF)]
        );
    }
}
