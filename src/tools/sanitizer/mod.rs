//! compute-sanitizer's tools (memcheck, racecheck, initcheck, synccheck):
//! the argv (`argv.rs`), PyTorch's allocator turned off under them
//! (`allocator.rs`), reading the XML and the text log back, and when a
//! stage is clean (`rules.rs`).

mod allocator;
mod argv;
mod elf_rodata;
mod host_stacks;
pub(super) mod launches;
mod own_kernels;
pub mod per_rank;
mod rules;
mod tensors_filled;
pub use rules::cut_records;

use cudawatch_model::Tool;
use cudawatch_parsers::builder::{ReportBuilder, SanitizerEvidence};

use super::{
    FollowUp, FollowUpContext, StageCommand, StageContext, StageFiles, StageJudged, StageKind,
    StageRecord,
};

pub use allocator::{OFF as ALLOCATOR_OFF_VARIABLE, allocator_off};
pub use argv::{
    LINE_PREFIX, RECORD_END, SanitizerCall, SanitizerLaunches, argv, can_flood, can_loop,
    probe_argv, without_call_stacks, without_host_stacks, without_kernel_recovery,
};
pub use launches::{
    FIRST_BLOCK_OPTION, LIBRARY_FILTER_SINCE, LIBRARY_FILTERED, TRACK_FILTERED_STORES,
    leaves_out_libraries_in, unchecked_before,
};
pub use own_kernels::{cut_short_warning as own_kernel_search_cut_short, library_named};
pub use rules::{output_complete, rule};

/// The compute-sanitizer tools' kind.
pub struct Sanitizer;

impl StageKind for Sanitizer {
    /// memcheck, racecheck and synccheck add 34 to 150 MiB whatever the
    /// program holds; initcheck's shadow adds 12.6% of it.
    fn gpu_need_mib(&self, tool: Tool, peak: u64) -> u64 {
        let factor = if tool == Tool::Initcheck { 1.2 } else { 1.1 };
        crate::tools::with_margin(peak, factor, 512)
    }

    /// On ResNet-18 and ViT-tiny steps on an H100: racecheck 45-65 s,
    /// initcheck 27-58 s, memcheck and synccheck 10-27 s.
    fn relative_cost(&self, tool: Tool) -> u32 {
        match tool {
            Tool::Racecheck => 10,
            Tool::Initcheck => 6,
            _ => 3,
        }
    }

    fn command(&self, ctx: &StageContext<'_>) -> StageCommand {
        let xml = ctx.stage_dir.join(format!("{}.xml", ctx.tool.name()));
        let (executable, version) = ctx.tools.sanitizer_for(ctx.tool);
        let argv = argv(
            &SanitizerCall {
                executable,
                tool: ctx.tool,
                xml: &xml,
                suppressions: ctx.sanitizer_suppressions,
                leak_check: ctx.leak_check,
                own_library_named: ctx.own_library_named,
                launches: ctx.sanitizer_launches,
                version,
                python: ctx.python,
            },
            ctx.program,
        );
        let mut command = StageCommand::tool(ctx, argv);
        if ctx.python && !ctx.keep_caching_allocator {
            let (set, remove) = allocator_off(ctx.alloc_conf.clone());
            command.env.extend(set);
            command.env_remove.extend(remove);
        }
        command
    }

    /// racecheck one step: its cost is minutes a step where it analyses
    /// cuDNN's and cuBLAS's kernels, and a shared-memory race is a kernel's
    /// own, the same in every launch of the same kernel. memcheck, initcheck
    /// and synccheck two: the second step is the first to run the
    /// optimizer's update on state the first one made (momentum buffers,
    /// Adam's moments), and initcheck's reads of it.
    fn first_steps(&self, tool: Tool) -> Option<u32> {
        match tool {
            Tool::Racecheck => Some(1),
            Tool::Memcheck | Tool::Initcheck | Tool::Synccheck => Some(2),
            _ => None,
        }
    }

    fn after_plain(&self, command: &mut StageCommand, plain: &StageRecord) {
        super::plain::blocked_by_plain_failure(command, plain);
    }

    /// initcheck's reruns, at once: with host stacks (the launching
    /// lines), and with every tensor filled (`tensors_filled`).
    fn follow_ups(
        &self,
        stage: &FollowUpContext<'_>,
        started: &[String],
        _finished: &[String],
    ) -> Vec<FollowUp> {
        if !started.is_empty() || stage.tool != Tool::Initcheck {
            return Vec::new();
        }
        let report = host_stacks::stage_report(stage);
        host_stacks::follow_up(stage, &report)
            .into_iter()
            .chain(tensors_filled::follow_up(stage, &report))
            .collect()
    }

    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged {
        if per_rank::ran_per_rank(files) {
            return per_rank::read(builder, files, record);
        }
        let tool = record.tool;
        let (evidence, text) = read_output(builder, files, tool, &xml_file(tool), "stdout");
        let filled = host_stacks::fill(builder, files, tool);
        let scratch = tensors_filled::mark(builder, files, tool);
        let usage = String::from_utf8_lossy(&text).contains("Usage: compute-sanitizer");
        let complete = output_complete(&files.sibling(Tool::Plain, "stdout"), &text);
        let (outcome, mut reason) = rule(record, &evidence, usage, complete);
        if filled > 0 {
            reason.push_str(&format!(
                "; the launching line of {} from a second run with host call stacks ({}.xml)",
                crate::words::plural(filled as u64, "site"),
                host_stacks::NAME
            ));
        }
        if let Some(scratch) = tensors_filled::reason(scratch) {
            reason.push_str("; ");
            reason.push_str(&scratch);
        }
        if let Some(unplaced) =
            host_stacks::unplaced_copies(builder, files, record, &evidence.summary)
        {
            reason.push_str("; ");
            reason.push_str(&unplaced);
        }
        StageJudged {
            outcome,
            reason,
            summary: evidence.summary,
        }
    }
}

/// A command line from its words, split at spaces (the follow-ups' tests).
#[cfg(test)]
fn argv_of(words: &str) -> Vec<std::ffi::OsString> {
    words.split(' ').map(std::ffi::OsString::from).collect()
}

/// The XML a stage of `tool` saves in its folder.
fn xml_file(tool: Tool) -> String {
    format!("{}.xml", tool.name())
}

/// One compute-sanitizer run's output in the stage's folder, its XML and
/// its text log, read into `builder`; the text comes back too (the stage
/// rules read it). The stage's own run and initcheck's rerun with host
/// stacks are read the same way.
fn read_output(
    builder: &mut ReportBuilder,
    files: &StageFiles,
    tool: Tool,
    xml_file: &str,
    text_file: &str,
) -> (SanitizerEvidence, Vec<u8>) {
    read_output_of(builder, files, tool, xml_file, text_file, None)
}

/// [`read_output`] of one process's own compute-sanitizer, whose sites name
/// `process`.
fn read_output_of(
    builder: &mut ReportBuilder,
    files: &StageFiles,
    tool: Tool,
    xml_file: &str,
    text_file: &str,
    process: Option<&cudawatch_model::ProcessRef>,
) -> (SanitizerEvidence, Vec<u8>) {
    // The program's own output is in it: read as the plain run reads it,
    // from both ends (the tool's summary is at the end; its records are in
    // the XML), and a cut one keeps the stage from vouching unless what was
    // cut is the tool's own lines alone.
    let text = files.read_program_beside(text_file, Some(LINE_PREFIX));
    let xml = files.open(xml_file);
    let xml_name = files.rel(xml_file);
    let evidence = builder.sanitizer_of(
        tool,
        xml.map(|r| (xml_name.as_str(), r)),
        Some((files.rel(text_file).as_str(), text.as_slice())),
        process,
    );
    (evidence, text)
}
