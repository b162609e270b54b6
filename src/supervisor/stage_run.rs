//! One stage run's owner, before and between its tries: what every way of
//! starting a stage (alone, in a batch, beside the plain run, again alone)
//! shares. Its command as the plain run (or the assumed one) narrowed it,
//! its folder, its GPU, its time limit and its Started event are made here
//! once (`prepare`, `announce`); after a try, whether it runs again is
//! asked of its kind here once (`retry_of`), whatever loop ran the try.
//! The tries themselves run in `stage::run_stage_steered` (again at once)
//! and `stage::run_again_alone` (again alone).

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use cudawatch_model::Tool;

use super::events::StageEvent;
use crate::errors::ExpectedError;
use crate::plan::{Plan, Stage};
use crate::tools::StageRecord;
use crate::tools::retry::{Retry, TryEnded, When};

/// A stage ready to start: its command, its limit and its command line as
/// the progress shows it.
pub(super) struct Prepared {
    /// The stage as it runs.
    pub stage: Stage,
    /// Its time limit.
    pub limit: Duration,
    /// Its command line and where it runs (`[GPU 1]`, `[again, alone]`).
    pub shown: String,
}

/// Where a stage starts, and what its command is narrowed by.
pub(super) struct Start<'a> {
    /// The plain run as it ended; `None` before it ended (the stage's
    /// limit is then the fallback until the plain run's time is known).
    pub plain: Option<&'a StageRecord>,
    /// The record to narrow the command by when the plain run has not
    /// ended: the assumed one of a stage started beside it.
    pub assumed: Option<&'a StageRecord>,
    /// Its GPU, when pinned.
    pub slot: Option<&'a String>,
    /// What the progress line says after the command.
    pub label: &'a str,
}

/// Stage `index` made ready to start: its command narrowed, its folder
/// made with the files its command reads, its GPU set, its limit computed.
pub(super) fn prepare(
    plan: &Plan,
    index: usize,
    start: &Start<'_>,
) -> Result<Prepared, ExpectedError> {
    let mut stage = stage_after_plain(&plan.stages[index], start.plain.or(start.assumed));
    if let Some(gpu) = start.slot {
        stage
            .command
            .env
            .push(("CUDA_VISIBLE_DEVICES".into(), gpu.clone()));
    }
    create_stage_dir(&stage)?;
    let limit = plan.limit(stage.tool, start.plain);
    let mut shown = shell_words(&stage.command.argv);
    if let Some(gpu) = start.slot {
        shown.push_str(&format!("  [GPU {gpu}]"));
    }
    shown.push_str(start.label);
    Ok(Prepared {
        stage,
        limit,
        shown,
    })
}

/// Says that stage `index` starts (once per try), as prepared.
pub(super) fn announce(
    plan: &Plan,
    index: usize,
    prepared: &Prepared,
    on_event: &mut impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<(), ExpectedError> {
    on_event(StageEvent::Started {
        index,
        total: plan.stages.len(),
        tool: prepared.stage.tool,
        command: &prepared.shown,
        quiet: prepared.stage.command.not_needed(),
    })
}

/// How a try ended, beyond its record, for its kind's answer.
#[derive(Default)]
pub(super) struct TryContext<'a> {
    /// The plain run as it ended, when it did.
    pub plain: Option<&'a StageRecord>,
    /// It ran beside other stages or the plain run.
    pub beside_others: bool,
    /// The flood watch stopped it after this many records.
    pub flooded: Option<u64>,
    /// The repeat watch stopped it.
    pub looped: bool,
}

/// Whether the try of `stage` that ended with `record` runs again, and
/// when (`When::Now`, `When::Alone`): its kind's answer, each reason once
/// (`tried`: the folders of the reasons its tries already ran again for).
pub(super) fn retry_of(
    plan: &Plan,
    stage: &Stage,
    (record, tried): (&StageRecord, &[&str]),
    context: &TryContext<'_>,
    when: When,
) -> Option<Retry> {
    let plain_dir = plan
        .stages
        .iter()
        .find(|s| s.tool == cudawatch_model::Tool::Plain)
        .map(|s| s.dir.as_path());
    let ended = TryEnded {
        record,
        stage_dir: &stage.dir,
        plain_dir: plain_dir.filter(|_| context.plain.is_some()).map(Path::new),
        plain_ok: context
            .plain
            .is_some_and(|p| p.end == cudawatch_model::ProcessEnd::Exited(0)),
        beside_others: context.beside_others,
        command: &stage.command,
        flooded: context.flooded,
        looped: context.looped,
        tried,
    };
    crate::tools::kind(stage.tool)
        .retry(&ended)
        .filter(|r| r.when == when && !tried.contains(&r.folder))
}

/// The stage as it runs: its command narrowed by what the plain run showed,
/// once there was one.
pub(super) fn stage_after_plain(stage: &Stage, plain: Option<&StageRecord>) -> Stage {
    let mut stage = stage.clone();
    if let Some(plain) = plain
        && stage.tool != Tool::Plain
    {
        crate::tools::kind(stage.tool).after_plain(&mut stage.command, plain);
    }
    stage
}

/// The stage's folder, with the files its command reads.
pub(super) fn create_stage_dir(stage: &Stage) -> Result<(), ExpectedError> {
    let failed = |path: &std::path::Path, e: std::io::Error| ExpectedError::RunDir {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&stage.dir).map_err(|e| failed(&stage.dir, e))?;
    for file in &stage.command.files {
        let path = &file.path;
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(|e| failed(folder, e))?;
        }
        std::fs::write(path, &file.contents).map_err(|e| failed(path, e))?;
        if file.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| failed(path, e))?;
        }
    }
    Ok(())
}

/// The command line as a shell would take it back (for progress lines):
/// shlex quotes `'`, spaces and the rest the way a POSIX shell reads them.
pub(super) fn shell_words(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            // A NUL cannot be quoted for a shell; show it as such.
            shlex::try_quote(&s).map_or_else(|_| format!("{s:?}"), |q| q.into_owned())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted_as_a_shell_reads_them() {
        let argv: Vec<OsString> = ["python3", "train.py", "--name", "it's a test", "a;b"]
            .into_iter()
            .map(OsString::from)
            .collect();
        let line = shell_words(&argv);
        assert_eq!(
            shlex::split(&line).unwrap(),
            ["python3", "train.py", "--name", "it's a test", "a;b"]
        );
    }
}
