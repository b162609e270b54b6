//! initcheck's launching lines, when its stage ran without host call
//! stacks (`--show-backtrace device`, or `no` for a Python program, for
//! speed: docs/tool-surprises.md).
//! A read in one of ATen's kernels is only worth fixing at the Python line
//! that launched it (`buf.sum()` on a `torch.empty` buffer), and that line
//! is in the host stack. So when the stage's records hold such a site, the
//! program runs once more under initcheck with host stacks for its first
//! records only (`--print-limit`: past them the tool counts at the speed
//! of a run without stacks), and each site without launching frames takes
//! those of the same site there. Counts and samples stay the stage's own.

use std::ffi::OsString;

use cudawatch_model::{FindingKind, Owner, Report, Tool, ToolSummary};
use cudawatch_parsers::builder::ReportBuilder;

use crate::tools::{FollowUp, FollowUpContext, StageFiles, StageRecord};

/// The follow-up's name, and its files' stem in the stage's folder.
pub const NAME: &str = "host-stacks";
/// Records printed with their host stacks: enough for the first record of
/// every site of a real bug (`empty_then_reduce`: 128), few enough that a
/// flood of library reads (ViT-tiny: 834,063) costs about a run without
/// stacks.
pub const PRINT_LIMIT: u32 = 2000;

/// The rerun with host stacks, when the stage ran without them and a site
/// outside NVIDIA's libraries has no launching line. After a flood (the
/// tool dropped records, its error buffer overflowed without stacks, and
/// reported more than [`FLOOD_RECORDS`]) a run with stacks would cost as
/// much as the flood did (ViT-tiny's step: over three minutes); then only
/// a host copy is worth one, and only where
/// the stage's compute-sanitizer tracks what unchecked kernels write: the
/// rerun checks no kernel, so only the host API's records come back
/// ([`copies_only`]: EfficientNet's two steps, 68 s alone on an H200).
/// `report`: the stage's, [`stage_report`].
pub fn follow_up(stage: &FollowUpContext<'_>, report: &Report) -> Option<FollowUp> {
    if stage.tool != Tool::Initcheck {
        return None;
    }
    let argv = with_host_stacks(&stage.command.argv, &stage.stage_dir.join(xml_name()))?;
    let unplaced: Vec<&cudawatch_model::Site> = report
        .findings
        .iter()
        .filter(|s| needs_launching_line(s))
        .collect();
    if unplaced.is_empty() {
        return None;
    }
    let argv = if flooded(report) {
        if !unplaced
            .iter()
            .any(|s| s.kind == FindingKind::UninitializedCopy)
        {
            return None;
        }
        copies_only(&argv)?
    } else {
        argv
    };
    Some(FollowUp {
        name: NAME.into(),
        argv,
        env: stage.command.env.clone(),
        env_remove: stage.command.env_remove.clone(),
        stdout: stage.stage_dir.join(format!("{NAME}.stdout")),
        stderr: stage.stage_dir.join(format!("{NAME}.stderr")),
        timeout: None,
    })
}

/// Fills the launching frames of the stage's sites from the follow-up's
/// records; how many sites got them.
pub fn fill(builder: &mut ReportBuilder, files: &StageFiles, tool: Tool) -> usize {
    if tool != Tool::Initcheck {
        return 0;
    }
    if !files.path(&xml_name()).exists() {
        return 0;
    }
    let mut rerun = ReportBuilder::new(env!("CARGO_PKG_VERSION"));
    super::read_output(
        &mut rerun,
        files,
        tool,
        &xml_name(),
        &format!("{NAME}.stdout"),
    );
    builder.launch_frames_from(tool, &rerun.finish())
}

/// Why the stage's host copies still without a launching line after
/// [`fill`] have none, for the stage's reason: a copy with no place is
/// one the tool kept no stack for, or one whose rerun was not made, never
/// one cudawatch forgot to place. `summary`: the stage's own summary
/// lines, whose flood keeps the rerun from being made.
pub fn unplaced_copies(
    builder: &ReportBuilder,
    files: &StageFiles,
    record: &StageRecord,
    summary: &ToolSummary,
) -> Option<String> {
    if record.tool != Tool::Initcheck {
        return None;
    }
    let unplaced = builder
        .sites()
        .iter()
        .filter(|s| s.tool == Tool::Initcheck && s.kind == FindingKind::UninitializedCopy)
        .filter(|s| s.python_frame.is_none() && s.launch_frame.is_none())
        .count();
    if unplaced == 0 {
        return None;
    }
    let argv: Vec<OsString> = record.command.iter().map(OsString::from).collect();
    let why = if record.imports.iter().any(|(name, _)| name == NAME) {
        if files.path(&xml_name()).exists() {
            "compute-sanitizer kept no call stack for the copies, not even in the second \
             run with host call stacks (host-stacks.xml)"
        } else {
            "the second run with host call stacks left no records"
        }
    } else if with_host_stacks(&argv, std::path::Path::new(&xml_name())).is_none() {
        "compute-sanitizer kept no call stack for the copies"
    } else if flooded_summary(summary) {
        "initcheck ran without host call stacks (for speed) and dropped records, so \
         no second run with them was made (--host-stacks all keeps every stack, at \
         the cost of a run with them)"
    } else {
        "initcheck ran without host call stacks (for speed), and no second run with \
         them was made"
    };
    Some(format!(
        "{} without a launching line: {why}",
        crate::words::plural(unplaced as u64, "host copy site")
    ))
}

fn xml_name() -> String {
    format!("{NAME}.xml")
}

/// A site with no launching frame whose line to fix is where it was
/// launched: a framework kernel's (ATen's), or a kernel's without a source
/// line of its own; never one inside NVIDIA's libraries (nobody fixes
/// those from here).
fn needs_launching_line(site: &cudawatch_model::Site) -> bool {
    let unplaced = site.python_frame.is_none() && site.launch_frame.is_none();
    unplaced
        && match site.owner.as_ref().map(|o| o.owner) {
            Some(Owner::Library) => false,
            Some(Owner::Framework) => true,
            Some(Owner::User) | None => site.location.is_none(),
        }
}

/// Records a run reported, past which a run with host stacks costs about
/// what the flood did: the tool unwinds a stack for every record it
/// reports, kept or dropped (ViT-tiny's step: 834,063 records, over three
/// minutes). Below it a run whose error buffer overflowed in one launch is
/// no flood: a tabular script's `X.mean(0)`, 1,185 records, 692 of them
/// dropped (tests/gpu/real/train_tabular.py, H200), a second run of 9 s.
pub const FLOOD_RECORDS: u64 = 50_000;

/// The tool dropped records (`N errors were skipped (error buffer
/// overflow)`) and reported more than [`FLOOD_RECORDS`], kept and dropped
/// together.
pub(super) fn flooded(report: &Report) -> bool {
    report
        .inputs
        .iter()
        .filter_map(|input| input.summary.as_ref())
        .any(flooded_summary)
}

fn flooded_summary(summary: &ToolSummary) -> bool {
    // `errors` counts the records kept; the dropped ones are `skipped`.
    let dropped = summary.skipped.unwrap_or(0);
    dropped > 0 && summary.errors.unwrap_or(0) + dropped > FLOOD_RECORDS
}

/// The stage's records, owners named (cuDNN's kernels by the signature in
/// the text log): what initcheck's follow-ups are decided on.
pub fn stage_report(stage: &FollowUpContext<'_>) -> Report {
    let files = StageFiles::new(stage.stage_dir, stage.tool);
    let mut builder = ReportBuilder::new(env!("CARGO_PKG_VERSION"));
    super::read_output(
        &mut builder,
        &files,
        stage.tool,
        &super::xml_file(stage.tool),
        "stdout",
    );
    let mut report = builder.finish();
    crate::judge::owner::assign(&mut report);
    report
}

/// The stage's argv with host stacks, its first records only, into `xml`;
/// `None` when the stage already kept host stacks.
fn with_host_stacks(argv: &[OsString], xml: &std::path::Path) -> Option<Vec<OsString>> {
    let at = argv
        .windows(2)
        .position(|w| w[0] == "--show-backtrace" && (w[1] == "device" || w[1] == "no"))?;
    let mut out = argv.to_vec();
    out.drain(at..at + 2);
    let value_after = |out: &mut Vec<OsString>, flag: &str, value: OsString| {
        let i = out.iter().position(|a| a == flag)?;
        *out.get_mut(i + 1)? = value;
        Some(())
    };
    value_after(&mut out, "--save", xml.into())?;
    value_after(&mut out, "--print-limit", PRINT_LIMIT.to_string().into())?;
    Some(out)
}

/// `argv` checking no kernel, still tracking what every kernel writes:
/// the kernel filter (`--kernel-name-exclude regex=...`) replaced by one
/// no kernel matches. Only where the stage tracks what unchecked kernels
/// write (compute-sanitizer 2026.4's
/// `--initcheck-track-filtered-global-memory`): without it every read of
/// a kernel's output would come back uninitialised.
fn copies_only(argv: &[OsString]) -> Option<Vec<OsString>> {
    argv.iter()
        .any(|a| a == "--initcheck-track-filtered-global-memory")
        .then_some(())?;
    let at = argv.iter().position(|a| a == "--kernel-name-exclude")?;
    let mut out = argv.to_vec();
    *out.get_mut(at)? = "--kernel-name".into();
    *out.get_mut(at + 1)? = NO_KERNEL.into();
    Some(out)
}

/// A kernel filter no kernel's name matches.
const NO_KERNEL: &str = "kns=cudawatch_no_such_kernel";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::sanitizer::argv_of as words;

    #[test]
    fn the_rerun_keeps_every_flag_but_the_stack_the_limit_and_the_file() {
        let stage = words(
            "cs --tool initcheck --xml --save /r/initcheck/initcheck.xml --print-limit 0 \
             --error-exitcode 86 --show-backtrace device --destroy-on-device-error kernel \
             python3 p.py --print-limit 0",
        );
        let got = with_host_stacks(&stage, std::path::Path::new("/r/initcheck/host-stacks.xml"));
        assert_eq!(
            got,
            Some(words(
                "cs --tool initcheck --xml --save /r/initcheck/host-stacks.xml --print-limit 2000 \
                 --error-exitcode 86 --destroy-on-device-error kernel python3 p.py --print-limit 0"
            ))
        );
        // A Python program's stage, which kept no stack at all, the same.
        let stage = words(
            "cs --tool initcheck --xml --save /r/initcheck/initcheck.xml --print-limit 0 \
             --show-backtrace no python3 p.py",
        );
        assert_eq!(
            with_host_stacks(&stage, std::path::Path::new("/r/initcheck/host-stacks.xml")),
            Some(words(
                "cs --tool initcheck --xml --save /r/initcheck/host-stacks.xml --print-limit 2000 \
                 python3 p.py"
            ))
        );
        // A stage that kept its host stacks.
        assert_eq!(
            with_host_stacks(&words("cs --tool initcheck --save x p"), "y".as_ref()),
            None
        );
    }

    #[test]
    fn a_flood_is_many_records_dropped_not_one_launchs_overflow() {
        let summary = |errors, skipped| ToolSummary {
            errors: Some(errors),
            skipped: Some(skipped),
            ..Default::default()
        };
        // A tabular script's `X.mean(0)` (H200): one launch overflowed.
        assert!(!flooded_summary(&summary(493, 692)));
        // Its twin with a column nobody wrote: 300,983 records, 771 kept.
        assert!(flooded_summary(&summary(771, 300_212)));
        // Many records, none dropped: each has its stack's place to keep.
        assert!(!flooded_summary(&summary(80_000, 0)));
    }

    #[test]
    fn after_a_flood_the_rerun_checks_no_kernel_and_only_where_stores_are_tracked() {
        let tracked = words(
            "cs --tool initcheck --kernel-name-exclude regex=(cudnn|nvjet) \
             --initcheck-track-filtered-global-memory yes python3 p.py",
        );
        assert_eq!(
            copies_only(&tracked),
            Some(words(
                "cs --tool initcheck --kernel-name kns=cudawatch_no_such_kernel \
                 --initcheck-track-filtered-global-memory yes python3 p.py"
            ))
        );
        // Under a compute-sanitizer that cannot track them, no rerun: every
        // read of a kernel's output would be a record.
        let untracked = words("cs --tool initcheck --kernel-name-exclude regex=(cudnn) p");
        assert_eq!(copies_only(&untracked), None);
        assert_eq!(copies_only(&words("cs --tool initcheck p")), None);
    }
}
