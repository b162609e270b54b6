//! One stage run's owner, from its first try to its last (nextest's
//! `run_test_instance`): what every way of starting a stage (alone, in a
//! batch, beside the plain run) shares. Its command as the plain run (or
//! the assumed one) narrowed it, its folder, its GPU, its time limit and
//! its Started event are made here (`prepare`, `announce`); its tries run
//! here, in one loop (`run_tries`): after each, its kind answers whether
//! it runs again (`retry_of`), at once or alone once the stages beside it
//! are done (`AloneGate`), and each earlier try is kept with its record.
//! One try itself is `stage::run_once`.

use std::ffi::OsString;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use cudawatch_model::Tool;
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard, watch};

use super::child::Steer;
use super::events::StageEvent;
use super::notices::Notices;
use super::signals::{Shutdown, Signals};
use crate::errors::ExpectedError;
use crate::plan::{Plan, Stage};
use crate::tools::retry::{Retry, TryEnded, When};
use crate::tools::{EarlierTry, StageRecord};

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

/// Runs stage `index` with nothing beside it: prepared, announced (its
/// command line and `label` after it), its tries.
pub(super) async fn run_alone(
    plan: &Plan,
    index: usize,
    (plain, gate): (Option<&StageRecord>, &AloneGate),
    (signals, notices): (&mut Signals, &Notices),
    on_event: &mut impl FnMut(StageEvent<'_>) -> Result<(), ExpectedError>,
) -> Result<StageRecord, ExpectedError> {
    let start = Start {
        plain,
        assumed: None,
        slot: None,
        label: "",
    };
    let prepared = prepare(plan, index, &start)?;
    announce(plan, index, &prepared, on_event)?;
    let place = Place {
        plain,
        beside_others: false,
        steer: None,
        gate,
        alone_later: false,
    };
    let begin = Begin::First(prepared);
    Ok(run_tries(plan, index, begin, place, (signals, notices))
        .await
        .0)
}

/// What lets a try run alone: every try holds it shared while it runs, one
/// run again alone holds it whole, so it starts once the tries beside it
/// are done and those that start after it wait for it (tokio's lock is
/// fair). One per run, shared by every stage's tries.
#[derive(Clone, Default)]
pub struct AloneGate(Rc<RwLock<()>>);

/// A try's hold on the gate, released when dropped.
struct Held<'a> {
    _shared: Option<RwLockReadGuard<'a, ()>>,
    _alone: Option<RwLockWriteGuard<'a, ()>>,
}

impl AloneGate {
    /// Waits for the gate as a try `alone` or beside others needs it; a
    /// stop order meanwhile (`steer`) gives up: `None`.
    async fn enter(
        &self,
        alone: bool,
        steer: &mut Option<watch::Receiver<Steer>>,
    ) -> Option<Held<'_>> {
        let wait = async {
            if alone {
                Held {
                    _shared: None,
                    _alone: Some(self.0.write().await),
                }
            } else {
                Held {
                    _shared: Some(self.0.read().await),
                    _alone: None,
                }
            }
        };
        let Some(orders) = steer else {
            return Some(wait.await);
        };
        tokio::select! {
            held = wait => Some(held),
            _ = orders.wait_for(|order| *order == Steer::Cancel) => None,
        }
    }
}

/// Where a stage's tries run: what the kind weighs after each, and what
/// the tries share.
pub(super) struct Place<'a> {
    /// The plain run as it ended, when it had.
    pub plain: Option<&'a StageRecord>,
    /// The first try runs beside other stages or the plain run.
    pub beside_others: bool,
    /// Orders while a try runs (a stage beside the plain run: its real
    /// limit, or stop).
    pub steer: Option<watch::Receiver<Steer>>,
    /// The run's gate.
    pub gate: &'a AloneGate,
    /// An answer to run again alone is left to whoever reads the record
    /// (a stage beside the plain run: the kind weighs it once the plain
    /// run has ended, `Begin::Ended`).
    pub alone_later: bool,
}

/// Where a stage run begins.
pub(super) enum Begin {
    /// Its first try, prepared and announced.
    First(Prepared),
    /// After a try that ended elsewhere (beside the plain run): its kind
    /// weighs it now.
    Ended(Box<StageRecord>),
    /// After a try that ended, again as the caller decided (a plain run
    /// crowded out by the stages beside it).
    Again(Box<StageRecord>, Retry),
}

/// Runs stage `index` from `begin` to its last try: after each, its kind
/// answers whether it runs again (`retry_of`), at once in the same place
/// or alone once the tries beside it are done, unless the user is
/// stopping or a stop order ended it. Each earlier try is kept in its
/// folder (`flooded/`, `crowded/`) with its record, and the last try's
/// record carries them all (`earlier_tries`), their time and notes too.
/// Returns the record and whether a stop order ended it.
pub(super) async fn run_tries(
    plan: &Plan,
    index: usize,
    begin: Begin,
    mut place: Place<'_>,
    (signals, notices): (&mut Signals, &Notices),
) -> (StageRecord, bool) {
    let planned = &plan.stages[index];
    let (mut current, mut limit, mut alone) = (planned.clone(), Duration::ZERO, false);
    let mut before = Tries::default();
    // The folders of the reasons it already ran again for: each is
    // answered once, kept or not.
    let mut tried: Vec<String> = Vec::new();
    let mut decided: Option<Retry> = None;
    let mut ended = match begin {
        Begin::First(prepared) => {
            (current, limit) = (prepared.stage, prepared.limit);
            None
        }
        Begin::Ended(record) => Some((*record, false)),
        Begin::Again(record, retry) => {
            decided = Some(retry);
            Some((*record, false))
        }
    };
    if ended.is_some() {
        current = stage_after_plain(planned, place.plain);
    }
    loop {
        let mut context = TryContext::default();
        let (record, cancelled) = match ended.take() {
            Some(it) => it,
            None => {
                let held = place.gate.enter(alone, &mut place.steer).await;
                // Stopped while it waited for the stages beside it: the
                // earlier try is kept, this one never ran.
                let stopped = signals.shutdown() != Shutdown::None && alone;
                let Some(_held) = held.filter(|_| !stopped) else {
                    let mut record = before.onto(StageRecord::unfinished(current.tool));
                    record.interrupted = stopped;
                    record.notes.push("stopped before it ran again".into());
                    return (record, !stopped);
                };
                let watch_floods = !tried.iter().any(|t| t == "flooded");
                let orders = (limit, place.steer.clone());
                let (record, end) =
                    super::stage::run_once(plan, &current, orders, watch_floods, signals).await;
                context.flooded = end.flooded.then_some(plan.flood_records);
                context.looped = end.repeating;
                (record, end.cancelled)
            }
        };
        context.plain = place.plain;
        context.beside_others = place.beside_others && !alone;
        tried.extend(
            (record.earlier_tries.iter())
                .filter_map(|t| t.folder.split('/').next())
                .map(str::to_string),
        );
        let wanted = !cancelled && !record.interrupted && signals.shutdown() == Shutdown::None;
        let retry = decided.take().or_else(|| {
            let tried: Vec<&str> = tried.iter().map(String::as_str).collect();
            wanted
                .then(|| retry_of(plan, &current, (&record, &tried), &context))
                .flatten()
        });
        let retry = retry.filter(|r| !(r.when == When::Alone && place.alone_later));
        let Some(retry) = retry else {
            return (before.onto(record), cancelled);
        };
        tried.push(retry.folder.to_string());
        let kept = set_aside(&current, retry.folder);
        // The kept try keeps its record: how it ended is what the note says.
        if let (Some(kept), Some(run_dir)) = (&kept, current.dir.parent()) {
            let _ = crate::rundir::write_json(&run_dir.join(kept).join("stage.json"), &record);
        }
        before.add(&record, &retry, kept);
        let next = next_try(plan, index, &current, &retry, (&record, place.plain));
        let next = match next {
            Ok(next) => next,
            Err(e) => {
                let mut record = before.onto(record);
                record
                    .notes
                    .push(format!("{} and it could not run again: {e}", retry.reason));
                return (record, cancelled);
            }
        };
        if let Some(notice) = &retry.notice {
            notices.say(planned.tool, notice.clone());
        }
        if retry.when == When::Alone {
            let quiet = next.stage.command.not_needed();
            notices.started(index, next.shown.clone(), quiet);
            alone = true;
        }
        (current, limit) = (next.stage, next.limit);
    }
}

/// The next try of a stage whose try ended with `record`: at once, with
/// the kind's command and the limit its orders left it; or alone, prepared
/// again as it first was (no GPU pinned: it has the machine).
fn next_try(
    plan: &Plan,
    index: usize,
    current: &Stage,
    retry: &Retry,
    (record, plain): (&StageRecord, Option<&StageRecord>),
) -> Result<Prepared, ExpectedError> {
    if retry.when == When::Alone {
        let start = Start {
            plain,
            assumed: None,
            slot: None,
            label: "  [again, alone]",
        };
        return prepare(plan, index, &start);
    }
    let mut stage = current.clone();
    if let Some(command) = retry.command.clone() {
        stage.command = command;
    }
    create_stage_dir(&stage)?;
    Ok(Prepared {
        shown: String::new(),
        // The limit it ran under, as its orders left it.
        limit: Duration::from_secs_f64(record.timeout_seconds),
        stage,
    })
}

/// A stage's earlier tries, for the record of its last.
#[derive(Default)]
struct Tries {
    seconds: f64,
    notes: Vec<String>,
    earlier: Vec<EarlierTry>,
}

impl Tries {
    fn add(&mut self, record: &StageRecord, retry: &Retry, kept: Option<String>) {
        let note = retry.note.clone().unwrap_or_else(|| match retry.when {
            When::Now => retry.reason.clone(),
            When::Alone => format!("{}, and was run again alone", retry.reason),
        });
        self.notes
            .push(format!("{note}{}", retry.kept_said.words(kept.as_deref())));
        self.earlier.push(EarlierTry {
            reason: retry.reason.clone(),
            folder: kept.unwrap_or_default(),
            judged: retry.judged,
        });
        // A try run again alone was crowded out or its tool died: the
        // stage's time is its own try's. One run again at once was the
        // stage's own work.
        if retry.when == When::Now {
            self.seconds += record.seconds;
        }
    }

    /// The last try's record with the earlier tries': their time, notes
    /// and folders.
    fn onto(self, mut record: StageRecord) -> StageRecord {
        record.seconds += self.seconds;
        record.notes.extend(self.notes);
        record.earlier_tries.splice(0..0, self.earlier);
        record
    }
}

/// Moves a stage's try to `<folder>/<stage>/` in the run directory
/// (`crowded`, `flooded`: the evidence of why it ran again); returns that
/// path as the report names it, or `None` when it could not be kept.
fn set_aside(stage: &Stage, folder: &str) -> Option<String> {
    let run_dir = stage.dir.parent()?;
    let name = stage.dir.file_name()?;
    let to = run_dir.join(folder).join(name);
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(to.parent()?).ok()?;
    std::fs::rename(&stage.dir, &to).ok()?;
    Some(format!("{folder}/{}", name.to_string_lossy()))
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
        .filter(|r| !tried.contains(&r.folder))
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
