//! Nsight Compute: the profiling run and its CSV imports (`argv.rs`), the
//! imports planned after the stage (the raw and details pages and the call
//! stacks at once, then the source pages of the launches that the raw page
//! says waste the most sectors), reading the pages
//! back, and when the stage is clean (`rules.rs`).

mod argv;
pub mod mps;
mod rules;
mod vendor_filter;

use std::time::Duration;

use cudawatch_model::{FindingKind, Outcome};
use cudawatch_parsers::builder::ReportBuilder;

use super::{
    FollowUp, FollowUpContext, StageCommand, StageContext, StageFiles, StageJudged, StageRecord,
};

pub use argv::{
    NcuOptions, imports, kernel_replay_mib, leave_out_nccl, leaves_out_nccl, probe_argv,
    profile_argv, source_import, without_python_stacks,
};
pub use rules::rule;

/// What a profiling command's filter of ours left out, as the report's
/// note says it.
pub fn left_out_by_name(command: &[String]) -> crate::judge::notes::NcuLeftOut {
    use crate::judge::notes::NcuLeftOut;
    match vendor_filter::left_out(command) {
        None => NcuLeftOut::Nothing,
        Some(l) if l.libraries => NcuLeftOut::PytorchsAndLibraries,
        Some(_) => NcuLeftOut::Pytorchs,
    }
}

/// The CSV imports are quick; they get this long each.
const IMPORT_TIMEOUT: Duration = Duration::from_secs(300);
/// Source pages read from a profile, worst launches first.
const MAX_SOURCE_PAGES: usize = 8;
/// The profile the stage writes in its folder.
const PROFILE: &str = "profile.ncu-rep";

/// ncu's kind.
pub struct Ncu;

impl super::StageKind for Ncu {
    /// Its kernel replay keeps a copy of the program's memory on the GPU
    /// (+16.5 GiB beside a 16.6 GiB program).
    fn gpu_need_mib(&self, _tool: cudawatch_model::Tool, peak: u64) -> u64 {
        kernel_replay_mib(peak)
    }

    /// 28 s alone on the corpus's steps, twice that beside racecheck.
    fn relative_cost(&self, _tool: cudawatch_model::Tool) -> u32 {
        7
    }

    /// One step: each distinct launch (kernel and shape) is profiled once,
    /// and a training loop's first step launches every kernel its later
    /// steps do.
    fn first_steps(&self, _tool: cudawatch_model::Tool) -> Option<u32> {
        Some(1)
    }

    fn command(&self, ctx: &StageContext<'_>) -> StageCommand {
        let sections = ctx.stage_dir.join(argv::SECTION_FOLDER);
        let argv = profile_argv(
            &ctx.tools.ncu,
            ctx.ncu,
            ctx.own_library_named,
            &sections,
            &ctx.stage_dir.join("profile"),
            ctx.program,
            ctx.python,
        );
        let section = sections.join(format!("{}.section", argv::SECTION_NAME));
        let mut command = StageCommand {
            files: vec![super::StageFile {
                path: section,
                contents: argv::SECTION.to_string(),
                executable: false,
            }],
            ..StageCommand::tool(ctx, argv)
        };
        if ctx.mps_pipe.is_some() {
            command.env.push(mps::outside(ctx.stage_dir));
        }
        command
    }

    fn after_plain(&self, command: &mut StageCommand, plain: &StageRecord) {
        super::plain::blocked_by_plain_failure(command, plain);
        super::plain::blocked_by_device_exception(command, plain);
        // Only when the plain run saw the program's own process alone on
        // the GPU: a program whose children use it (torchrun, a shell
        // script around the real program) keeps ncu following them.
        if plain.gpu_leader_only == Some(true) {
            argv::follow_program_only(&mut command.argv);
        }
        // A program that needs most of the GPU leaves kernel replay no
        // room for its copy: the whole program is replayed instead.
        if let Some((peak, total)) = plain.gpu_memory_mib
            && argv::no_room_for_a_copy(peak, total)
        {
            argv::replay_whole_program(&mut command.argv);
        }
    }

    fn follow_ups(
        &self,
        stage: &FollowUpContext<'_>,
        started: &[String],
        finished: &[String],
    ) -> Vec<FollowUp> {
        let profile = stage.stage_dir.join(PROFILE);
        if !profile.exists() {
            return Vec::new();
        }
        let import = |(name, argv): (String, Vec<std::ffi::OsString>)| FollowUp {
            stdout: stage.stage_dir.join(&name),
            stderr: stage.stage_dir.join(format!("{name}.stderr")),
            name,
            argv,
            env: Vec::new(),
            env_remove: Vec::new(),
            timeout: Some(IMPORT_TIMEOUT),
        };
        let is = |names: &[String], name: &str| names.iter().any(|n| n == name);
        // Each import is an ncu process reading the profile (a second or
        // more each): the pages and the call stacks (in pieces: the slowest,
        // about 50 ms a launch) at once; the source pages once the raw page
        // has said which launches are worth reading (on ResNet-18's step the
        // imports after the profile went from 5.4 s to about 3).
        if !is(started, "raw.csv") {
            let output =
                crate::safe_files::read(&stage.stage_dir.join("stdout")).unwrap_or_default();
            let launches = argv::profiled_launches(&output);
            return imports(&stage.tools.ncu, &profile)
                .into_iter()
                .chain(argv::stacks_imports(&stage.tools.ncu, &profile, launches))
                .map(import)
                .collect();
        }
        if !is(finished, "raw.csv") || started.iter().any(|n| n.starts_with("source-")) {
            return Vec::new();
        }
        // The raw page says which launches waste sectors: their source
        // pages, worst first.
        let raw = crate::safe_files::read(&stage.stage_dir.join("raw.csv")).unwrap_or_default();
        let mut launches = cudawatch_parsers::ncu::raw::parse(&raw).unwrap_or_default();
        launches.retain(|k| k.excessive_sectors.unwrap_or(0.0) > 0.0);
        launches.sort_by(|a, b| {
            b.excessive_sectors
                .unwrap_or(0.0)
                .total_cmp(&a.excessive_sectors.unwrap_or(0.0))
        });
        launches
            .iter()
            .take(MAX_SOURCE_PAGES)
            .map(|launch| source_import(&stage.tools.ncu, &profile, launch.launch_id))
            .map(import)
            .collect()
    }

    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged {
        let raw = files.read("raw.csv");
        let details = files.read("details.csv");
        let mut log = files.read_program("stdout");
        log.extend(files.read_program("stderr"));
        let sources: Vec<(String, Vec<u8>)> = files
            .names("source-", ".csv")
            .iter()
            .map(|name| (files.rel(name), files.read(name)))
            .collect();
        let source_refs: Vec<(&str, &[u8])> = sources
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let (raw_name, details_name, log_name) = (
            files.rel("raw.csv"),
            files.rel("details.csv"),
            files.rel("stdout"),
        );
        let before = uncoalesced_sites(builder);
        let evidence = builder.ncu(
            (!raw.is_empty()).then_some((raw_name.as_str(), raw.as_slice())),
            (!details.is_empty()).then_some((details_name.as_str(), details.as_slice())),
            &source_refs,
            Some((log_name.as_str(), log.as_slice())),
        );
        if let Some((name, stacks)) = read_stacks(files) {
            builder.ncu_stacks(&name, &stacks);
        }
        let uncoalesced = uncoalesced_sites(builder) - before;
        // The report file itself may have been left out of a copied run
        // directory (it is large); an imported raw page proves it existed.
        let profile = files.path(PROFILE).exists() || !raw.is_empty();
        let (outcome, mut reason) = rule(record, &evidence, uncoalesced, profile);
        if mps::ran_outside(record) {
            let checked = matches!(outcome, Outcome::Clean | Outcome::Findings);
            reason.push_str(mps::reason(checked));
        }
        // What cudawatch's filter left out, said where launches were
        // profiled (the rule says it where none was, and a stage that
        // never ran has nothing to say).
        if let Some(left_out) = vendor_filter::left_out(&record.command)
            && evidence.kernels > 0
        {
            reason.push_str(&format!("; {}", left_out.said()));
        }
        if argv::replays_whole_program(&record.command) {
            reason.push_str(
                "; the program ran once per replay pass (--replay-mode application): it \
                 held too much of the GPU for ncu to keep a copy of its memory there",
            );
        }
        StageJudged {
            outcome,
            reason,
            summary: evidence.summary,
        }
    }
}

/// The call stacks' text import, its pieces joined in launch order (the
/// launches pair with the raw page's rows in order), and the name it goes
/// by in the report's inputs: the file, or the pieces' pattern.
fn read_stacks(files: &StageFiles) -> Option<(String, Vec<u8>)> {
    let whole = files.read(argv::STACKS);
    if !whole.is_empty() {
        return Some((files.rel(argv::STACKS), whole));
    }
    let mut pieces: Vec<(u64, String)> = files
        .names(argv::STACKS_PIECE, ".txt")
        .into_iter()
        .filter_map(|name| {
            let first = name
                .strip_prefix(argv::STACKS_PIECE)?
                .strip_suffix(".txt")?
                .parse()
                .ok()?;
            Some((first, name))
        })
        .collect();
    pieces.sort();
    let mut text = Vec::new();
    for (_, name) in &pieces {
        text.extend(files.read(name));
        text.push(b'\n');
    }
    (!pieces.is_empty()).then(|| (files.rel(&format!("{}*.txt", argv::STACKS_PIECE)), text))
}

/// Counts the uncoalesced-access sites folded so far; the builder is the
/// one place sites live, so the ncu stage's share is a difference.
fn uncoalesced_sites(builder: &ReportBuilder) -> usize {
    builder
        .sites()
        .iter()
        .filter(|s| s.kind == FindingKind::UncoalescedAccess)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudawatch_model::Tool;

    #[test]
    fn the_stacks_pieces_are_read_back_in_launch_order_not_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let stage = dir.path().join("ncu");
        std::fs::create_dir(&stage).unwrap();
        // Name order would put launch 90 before launch 15.
        for (first, text) in [(0, "zero"), (15, "fifteen"), (90, "ninety")] {
            std::fs::write(stage.join(format!("stacks-{first}.txt")), text).unwrap();
        }
        std::fs::write(stage.join("stacks-x.txt"), "not a piece").unwrap();
        let (name, text) = read_stacks(&StageFiles::new(&stage, Tool::Ncu)).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), "zero\nfifteen\nninety\n");
        assert_eq!(name, "ncu/stacks-*.txt");
        // A run of an earlier version: one file of them all.
        std::fs::write(stage.join("stacks.txt"), "whole").unwrap();
        let (name, text) = read_stacks(&StageFiles::new(&stage, Tool::Ncu)).unwrap();
        assert_eq!(
            (name.as_str(), text.as_slice()),
            ("ncu/stacks.txt", &b"whole"[..])
        );
    }
}
