//! A stage's tries as data: when a try ends, the stage's kind answers
//! whether it runs again, why, when (at once, or alone once the stages
//! beside it are done), with what command, where the try is kept and
//! whether its findings stand (nextest's retries: the supervisor runs what
//! the kind answers, and records each try as an `EarlierTry`). The answers
//! are here, each saying itself which kinds it applies to (memcheck's
//! loop under kernel-level recovery, again with the tool's default; the
//! sanitizers' flood, again without call stacks; the CUDA graphs a stage's settings
//! broke, `cuda_graphs`; crowded out; a tool that died of a fault); a kind
//! with more to say adds its own in its `StageKind::retry`.

use std::path::Path;

use super::{StageCommand, StageRecord};

/// A try that just ended, as the kind judges whether to run it again.
pub struct TryEnded<'a> {
    /// What the supervisor saw of it.
    pub record: &'a StageRecord,
    /// Its folder.
    pub stage_dir: &'a Path,
    /// The plain run's folder, when the run has one.
    pub plain_dir: Option<&'a Path>,
    /// The plain run exited 0.
    pub plain_ok: bool,
    /// It ran beside other stages (or beside the plain run).
    pub beside_others: bool,
    /// The command it ran.
    pub command: &'a StageCommand,
    /// The flood watch stopped it after this many records.
    pub flooded: Option<u64>,
    /// The repeat watch stopped it: its records only repeated themselves
    /// under kernel-level recovery (`supervisor::repeats`).
    pub looped: bool,
    /// The folders of the stage's tries so far (`flooded`, `cudagraphs`):
    /// a reason a try was already run again for is not answered twice.
    pub tried: &'a [&'a str],
}

/// When the next try runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// At once, in the same slot (the stage's own settings failed it).
    Now,
    /// Alone, once the stages beside it are done (they crowded it out, or
    /// its tool died).
    Alone,
}

/// The kind's answer: run the stage again.
#[derive(Debug, Clone)]
pub struct Retry {
    /// Why, the start of the note the stage carries.
    pub reason: String,
    /// Where the try is kept in the run directory (`crowded`, `crashed`).
    pub folder: &'static str,
    /// Whether its findings stand with the stage's (a tool that died after
    /// printing them: yes; a try crowded out beside others: no).
    pub judged: bool,
    /// When the next try runs.
    pub when: When,
    /// The next try's command, when it changes (without call stacks, with
    /// the caching allocator on); `None`: the same.
    pub command: Option<StageCommand>,
    /// The line the progress shows now, when there is one.
    pub notice: Option<String>,
    /// The next try's note; `None`: "REASON, and was run again alone". The
    /// supervisor adds where the try is kept, as `kept_said` says.
    pub note: Option<String>,
    /// How the note says where the try is kept.
    pub kept_said: KeptSaid,
}

/// How a note says where an earlier try is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptSaid {
    /// `; the first try is in flooded/initcheck`.
    Path,
    /// `; its first try is under cudagraphs/`: the same words for every
    /// stage changed alike, so the report says them once for all
    /// (`Warning::grouped`).
    Folder,
}

impl KeptSaid {
    /// The words after the note, for a try kept at `kept` (`None`: it could
    /// not be kept).
    pub fn words(self, kept: Option<&str>) -> String {
        match (self, kept) {
            (_, None) => String::new(),
            (KeptSaid::Path, Some(path)) => format!("; the first try is in {path}"),
            (KeptSaid::Folder, Some(path)) => format!(
                "; its first try is under {}/",
                path.split('/').next().unwrap_or(path)
            ),
        }
    }
}

impl Retry {
    /// A try run again alone with the same command (crowded out, or its
    /// tool died), kept in `folder`.
    pub fn alone(reason: String, folder: &'static str, judged: bool) -> Retry {
        Retry {
            reason,
            folder,
            judged,
            when: When::Alone,
            command: None,
            notice: None,
            note: None,
            kept_said: KeptSaid::Path,
        }
    }
}

/// The kinds' answer, each part saying itself whether it applies: a
/// sanitizer's flood, at once without call stacks; CUDA graphs a sanitizer
/// stage's or ncu's settings broke, at once without them; crowded out
/// beside other stages, alone; a sanitizer's tool dead of a fault, alone.
pub fn answer(end: &TryEnded<'_>) -> Option<Retry> {
    looped(end)
        .or_else(|| flooded(end))
        .or_else(|| cuda_graphs(end))
        .or_else(|| crowded(end))
        .or_else(|| tool_crashed(end))
}

/// The answer every kind shares: a try that ran beside other stages and
/// ran out of GPU memory, could not listen on its port, or crashed before
/// the end of the work the plain run finished, runs again alone; what it
/// saw is not judged (it ran short of what the others took).
pub fn crowded(end: &TryEnded<'_>) -> Option<Retry> {
    if !end.beside_others {
        return None;
    }
    let tool = end.record.tool;
    let starved = super::starved::of_memory(tool, end.stage_dir, end.plain_dir)
        .or_else(|| super::starved::of_port(tool, end.stage_dir, end.plain_dir))
        .or_else(|| super::starved::crashed(tool, end.stage_dir, end.plain_dir, end.plain_ok))
        .or_else(|| super::starved::profile_failed(tool, end.stage_dir, end.plain_ok))?;
    Some(Retry::alone(
        format!("{starved} beside other stages"),
        "crowded",
        false,
    ))
}

/// The sanitizer stages' answer after the shared one: compute-sanitizer
/// itself died of a fault before its summary (`starved::tool_crashed`): run
/// once more alone, the records it printed before dying judged.
pub fn tool_crashed(end: &TryEnded<'_>) -> Option<Retry> {
    let why = super::starved::tool_crashed(end.record, end.stage_dir)?;
    Some(Retry::alone(why, "crashed", true))
}

/// The answer of a stage whose program's CUDA graphs failed under its own
/// settings (`cuda_graphs`): at once, without those settings; what the
/// first try saw is not judged (the program failed for the tool's sake).
pub fn cuda_graphs(end: &TryEnded<'_>) -> Option<Retry> {
    if end.tried.contains(&"cudagraphs") {
        return None;
    }
    let rerun =
        super::cuda_graphs::rerun(end.record.tool, end.command, end.record.end, end.stage_dir)?;
    Some(Retry {
        reason: "the program's CUDA graphs failed under the stage's settings".into(),
        folder: "cudagraphs",
        judged: false,
        when: When::Now,
        notice: Some(format!(
            "the program's CUDA graphs failed under the stage's settings: running again {}",
            rerun.changes()
        )),
        note: Some(rerun.note()),
        kept_said: KeptSaid::Folder,
        command: Some(rerun.command),
    })
}

/// A try the repeat watch stopped: under kernel-level recovery the tool
/// ended each faulting kernel and the program, never told, kept going
/// (a loop until its kernel succeeds), reporting the same errors until the
/// stage's limit. At once again with the tool's default, where the first
/// device error ends the checking as a plain compute-sanitizer's does; the
/// records it printed stand.
pub fn looped(end: &TryEnded<'_>) -> Option<Retry> {
    if !end.looped || end.tried.contains(&"looped") {
        return None;
    }
    let mut command = end.command.clone();
    if !super::sanitizer::without_kernel_recovery(&mut command.argv) {
        return None;
    }
    let seconds = end.record.seconds;
    let what = "repeated the same errors under kernel-level recovery, nothing new among them";
    Some(Retry {
        reason: format!("it {what}"),
        folder: "looped",
        judged: true,
        when: When::Now,
        command: Some(command),
        notice: Some(format!(
            "{what} (the program never saw its kernels fail, and kept going): stopped after \
             {seconds:.0}s, running again where the first error ends the checking"
        )),
        note: Some(format!(
            "it {what} (the program never saw its kernels fail, and kept going) and was \
             stopped after {seconds:.0}s, then run again with the tool's default \
             (--destroy-on-device-error context: the first device error ends the checking)"
        )),
        kept_said: KeptSaid::Path,
    })
}

/// A try the flood watch stopped (more records than the watch allows, each
/// unwinding its call stacks: a DataLoader step's initcheck spent 32 s so
/// on the H100): at once again without call stacks, its records judged.
pub fn flooded(end: &TryEnded<'_>) -> Option<Retry> {
    let limit = end.flooded?;
    if end.tried.contains(&"flooded") {
        return None;
    }
    let mut command = end.command.clone();
    if !super::sanitizer::without_call_stacks(&mut command.argv) {
        return None;
    }
    let flood = format!(
        "printed more than {} with call stacks (a flood)",
        crate::words::plural(limit, "record")
    );
    let seconds = end.record.seconds;
    Some(Retry {
        reason: format!("it {flood}"),
        folder: "flooded",
        judged: true,
        when: When::Now,
        command: Some(command),
        notice: Some(format!(
            "{flood} in {seconds:.0}s: stopped, and running again without them"
        )),
        note: Some(format!(
            "it {flood} and was stopped after {seconds:.0}s, then run again without them \
             (--show-backtrace no: each launch keeps its first records, and the tool counts \
             the rest)"
        )),
        kept_said: KeptSaid::Path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudawatch_model::Tool;

    fn ended<'a>(
        record: &'a StageRecord,
        command: &'a StageCommand,
        dir: &'a Path,
        flooded: Option<u64>,
        tried: &'a [&'a str],
    ) -> TryEnded<'a> {
        TryEnded {
            record,
            stage_dir: dir,
            plain_dir: None,
            plain_ok: true,
            beside_others: false,
            command,
            flooded,
            looped: false,
            tried,
        }
    }

    #[test]
    fn a_flood_is_run_again_at_once_without_call_stacks_and_only_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut record = StageRecord::unfinished(Tool::Initcheck);
        record.seconds = 32.0;
        let command = StageCommand {
            argv: [
                "compute-sanitizer",
                "--tool",
                "initcheck",
                "python3",
                "step.py",
            ]
            .map(std::ffi::OsString::from)
            .to_vec(),
            ..StageCommand::default()
        };
        let retry = answer(&ended(&record, &command, dir.path(), Some(10_000), &[])).unwrap();
        assert_eq!(retry.when, When::Now);
        assert_eq!((retry.folder, retry.judged), ("flooded", true));
        let argv = retry.command.unwrap().argv;
        assert!(
            argv.windows(2)
                .any(|w| w[0] == "--show-backtrace" && w[1] == "no"),
            "{argv:?}"
        );
        assert_eq!(
            retry.notice.as_deref(),
            Some(
                "printed more than 10000 records with call stacks (a flood) in 32s: stopped, and \
                 running again without them"
            )
        );
        // Flooded again without call stacks: no third try for it.
        let tried = ["flooded"];
        assert!(answer(&ended(&record, &command, dir.path(), Some(10_000), &tried)).is_none());
    }

    #[test]
    fn where_a_try_is_kept_is_said_per_stage_or_once_for_all() {
        assert_eq!(
            KeptSaid::Path.words(Some("flooded/initcheck")),
            "; the first try is in flooded/initcheck"
        );
        assert_eq!(
            KeptSaid::Folder.words(Some("cudagraphs/memcheck")),
            "; its first try is under cudagraphs/"
        );
        assert_eq!(KeptSaid::Path.words(None), "");
    }
}
