//! The sweep directory: what a sweep writes and what a resume and a merge
//! read back.
//!
//! ```text
//! DIR/sweep.toml                   the sweep file, as run (its hash is the sweep id)
//! DIR/shards/I-of-N.json           each shard's manifest: its targets
//! DIR/targets/NAME/attempt-K/      a `cudawatch run` directory
//! DIR/targets/NAME/attempt-K.out   that run's stdout and stderr
//! DIR/targets/NAME/attempt-K.err
//! DIR/targets/NAME/attempt-K.json  how the attempt ended (written last)
//! ```
//!
//! Nothing is ever rewritten but the manifests and the merged reports: a
//! resumed target gets a new attempt directory beside the old one, so a
//! rerun loses nothing, and a run directory stays one run's own.

use std::path::{Path, PathBuf};

use cudawatch_model::Report;
use serde::{Deserialize, Serialize};

use super::file::{SweepFile, Target};
use super::shard::Shard;
use crate::errors::ExpectedError;
use crate::rundir::{self, RunRecord};

/// One shard's manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// The sweep file's id.
    pub sweep_id: String,
    /// From 0.
    pub index: u32,
    /// How many shards.
    pub count: u32,
    /// This shard's targets, by name.
    pub targets: Vec<String>,
    /// When it last started (RFC 3339).
    pub started_at: String,
    /// Wall time of its last run, when that ended.
    #[serde(default)]
    pub seconds: Option<f64>,
}

/// How one attempt ended, as the sweep saw it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attempt {
    /// From 1.
    pub attempt: u32,
    /// `CUDA_VISIBLE_DEVICES` it ran under.
    pub gpu: Option<String>,
    /// `cudawatch run`'s exit code; `None` when killed by a signal.
    pub exit_code: Option<i32>,
    /// Wall time.
    pub seconds: f64,
    /// Stopped at its own timeout.
    pub timed_out: bool,
    /// Stopped because the sweep's budget ran out.
    pub by_budget: bool,
    /// Stopped by the user.
    pub interrupted: bool,
    /// It could not start, and why (one line).
    pub setup_error: Option<String>,
    /// Hash of the files its command names.
    pub checksum: Option<String>,
    /// Key of the code around them when it ran (`tree::key`): a resume
    /// runs a target again whose imported modules or sourced scripts
    /// changed since.
    #[serde(default)]
    pub tree: Option<String>,
    /// Hash of the `report.json` its run left, taken when the run ended: a
    /// report that differs later (rewritten, swapped for another run's, a
    /// stale copy) is not the one this attempt's exit code came from.
    #[serde(default)]
    pub report_digest: Option<String>,
}

impl Attempt {
    /// Ran to its end (findings or not): a resume skips it.
    pub fn finished(&self) -> bool {
        !self.timed_out
            && !self.by_budget
            && !self.interrupted
            && self
                .exit_code
                .is_some_and(|c| c != crate::exit_codes::INTERRUPTED)
    }
}

/// What is on disk for one target.
#[derive(Debug, Clone, Default)]
pub struct TargetDir {
    /// How many attempts were started (directories or records).
    pub attempts: u32,
    /// The attempt that finished, with its record, if one did.
    pub finished: Option<(u32, Option<Attempt>)>,
    /// The latest attempt with a record, finished or not.
    pub latest: Option<Attempt>,
}

/// A sweep directory.
#[derive(Debug, Clone)]
pub struct SweepDir {
    /// Its path (absolute).
    pub path: PathBuf,
}

impl SweepDir {
    /// Opens `path` for `file`'s sweep: creates it, or checks that it holds
    /// the same sweep (a resume, or another shard on a shared file system).
    pub fn open(path: &Path, file: &SweepFile) -> Result<SweepDir, ExpectedError> {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let err = |message: String| ExpectedError::RunDir {
            path: path.display().to_string(),
            message,
        };
        std::fs::create_dir_all(path.join("shards")).map_err(|e| err(e.to_string()))?;
        std::fs::create_dir_all(path.join("targets")).map_err(|e| err(e.to_string()))?;
        let copy = path.join("sweep.toml");
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&copy)
        {
            Ok(mut f) => std::io::Write::write_all(&mut f, file.text.as_bytes())
                .map_err(|e| err(e.to_string()))?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let before = read_sweep_file(&copy).map_err(|e| err(e.to_string()))?;
                if before != file.text {
                    return Err(err(format!(
                        "holds a sweep of another sweep file (or of {} before it changed): give a new --out-dir; resuming needs the same file",
                        file.path.display()
                    )));
                }
            }
            Err(e) => return Err(err(e.to_string())),
        }
        Ok(SweepDir { path })
    }

    /// An existing sweep directory, for merging.
    pub fn existing(path: &Path) -> Result<(SweepDir, String), ExpectedError> {
        let text = read_sweep_file(&path.join("sweep.toml")).map_err(|e| ExpectedError::Input {
            path: path.display().to_string(),
            message: format!("not a sweep directory (no readable sweep.toml: {e})"),
        })?;
        Ok((
            SweepDir {
                path: path.to_path_buf(),
            },
            text,
        ))
    }

    /// Where the manifest of `shard` goes.
    pub fn manifest_path(&self, shard: Shard) -> PathBuf {
        self.path
            .join("shards")
            .join(format!("{}-of-{}.json", shard.index, shard.count))
    }

    /// Every manifest in the directory.
    pub fn manifests(&self) -> Result<Vec<Manifest>, ExpectedError> {
        let dir = self.path.join("shards");
        let entries = std::fs::read_dir(&dir).map_err(|e| ExpectedError::Input {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
        let mut names: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        names.sort();
        names.iter().map(|p| rundir::read_json(p)).collect()
    }

    /// Holds shard `shard` of this directory for this process until the
    /// returned file is dropped (an exclusive `flock` on
    /// `shard-I-of-N.lock`, released by the kernel however the process
    /// ends): a second sweep of the same shard into the same directory is
    /// refused, as a second `run` into a used directory is, instead of
    /// running its targets twice at once. Other shards (Slurm's array
    /// tasks on a shared file system) hold their own.
    pub fn hold_shard(&self, shard: Shard) -> Result<std::fs::File, ExpectedError> {
        let path = self
            .path
            .join(format!("shard-{}-of-{}.lock", shard.index, shard.count));
        let refused = |message: String| ExpectedError::RunDir {
            path: self.path.display().to_string(),
            message,
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| refused(format!("cannot open {}: {e}", path.display())))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(
            |_| {
                refused(format!(
                    "another cudawatch sweep is running shard {}/{} into it: wait for it to \
                     end, or give another --out-dir",
                    shard.index, shard.count
                ))
            },
        )?;
        Ok(file)
    }

    /// Writes a manifest (atomically: a reader never sees half).
    pub fn write_manifest(&self, shard: Shard, manifest: &Manifest) -> Result<(), ExpectedError> {
        write_atomic(&self.manifest_path(shard), manifest)
    }

    fn target(&self, name: &str) -> PathBuf {
        self.path.join("targets").join(name)
    }

    /// The run directory of attempt `k` of target `name`.
    pub fn attempt_dir(&self, name: &str, k: u32) -> PathBuf {
        self.target(name).join(format!("attempt-{k}"))
    }

    /// The files around attempt `k`: record, stdout, stderr.
    pub fn attempt_files(&self, name: &str, k: u32) -> (PathBuf, PathBuf, PathBuf) {
        let t = self.target(name);
        (
            t.join(format!("attempt-{k}.json")),
            t.join(format!("attempt-{k}.out")),
            t.join(format!("attempt-{k}.err")),
        )
    }

    /// Records how attempt `k` ended.
    pub fn write_attempt(&self, name: &str, attempt: &Attempt) -> Result<(), ExpectedError> {
        std::fs::create_dir_all(self.target(name)).map_err(|e| ExpectedError::RunDir {
            path: self.target(name).display().to_string(),
            message: e.to_string(),
        })?;
        write_atomic(&self.attempt_files(name, attempt.attempt).0, attempt)
    }

    /// Reserves the next attempt's number: its output files are created
    /// now, so a kill before the run starts still counts it.
    pub fn next_attempt(&self, name: &str) -> Result<u32, ExpectedError> {
        let k = self
            .scan(name)
            .attempts
            .checked_add(1)
            .ok_or_else(|| ExpectedError::RunDir {
                path: self.target(name).display().to_string(),
                message: "holds an attempt numbered 4294967295: not a directory this sweep wrote"
                    .into(),
            })?;
        std::fs::create_dir_all(self.target(name)).map_err(|e| ExpectedError::RunDir {
            path: self.target(name).display().to_string(),
            message: e.to_string(),
        })?;
        Ok(k)
    }

    /// What is on disk for target `name`. An attempt counts as finished
    /// when its record says so, or, when the sweep was killed between the
    /// run's end and the record, when its run directory holds a report of
    /// every planned stage, not interrupted: a finished target is never
    /// run twice.
    pub fn scan(&self, name: &str) -> TargetDir {
        let mut found = TargetDir::default();
        let Ok(entries) = std::fs::read_dir(self.target(name)) else {
            return found;
        };
        let mut numbers: Vec<u32> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                let rest = n.strip_prefix("attempt-")?;
                rest.split('.').next()?.parse().ok()
            })
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        found.attempts = numbers.last().copied().unwrap_or(0);
        for k in numbers {
            let record: Option<Attempt> = rundir::read_json(&self.attempt_files(name, k).0).ok();
            let finished = match &record {
                Some(a) => a.finished(),
                None => complete_run(&self.attempt_dir(name, k)),
            };
            if finished {
                found.finished = Some((k, record.clone()));
            }
            if record.is_some() {
                found.latest = record;
            }
        }
        found
    }

    /// The report of attempt `k`, if its run got that far.
    pub fn report(&self, name: &str, k: u32) -> Option<Report> {
        rundir::read_json(&self.attempt_dir(name, k).join("report.json")).ok()
    }

    /// The digest of attempt `k`'s `report.json` as it is now.
    pub fn report_digest(&self, name: &str, k: u32) -> Option<String> {
        let path = self.attempt_dir(name, k).join("report.json");
        let bytes =
            crate::safe_files::read_at_most(&path, crate::judge::baseline::MAX_REPORT_BYTES)
                .ok()?;
        let mut hash = cudawatch_parsers::site::Fnv::default();
        hash.write(&bytes);
        Some(format!("{:016x}", hash.finish()))
    }

    /// Why attempt `k` of `target` says nothing of it, if so: its report is
    /// not the one its run left (its digest changed since the sweep
    /// recorded it; a record without a digest, an older sweep's, is trusted
    /// as before), or it is of another program (another target's, copied
    /// in with its record gone). `merge` calls such a target incomplete,
    /// and a resume runs it again.
    pub fn untrusted_report(
        &self,
        target: &Target,
        k: u32,
        record: Option<&Attempt>,
        report: Option<&Report>,
    ) -> Option<String> {
        if let Some(then) = record.and_then(|r| r.report_digest.as_ref())
            && self.report_digest(&target.name, k).as_ref() != Some(then)
        {
            return Some(
                "is not the one its run left (changed or replaced since the sweep recorded it)"
                    .into(),
            );
        }
        report
            .filter(|r| !r.target.is_empty() && r.target != target.command)
            .map(|r| format!("is of another program ({})", r.target.join(" ")))
    }
}

/// A run directory every planned stage of which recorded its end
/// (`stage.json`), with a report that has every one of those ends, and not
/// interrupted. The report alone proves nothing: one written mid-run lists
/// the stages still to come too. Nor do the records alone: a run killed
/// after its last `stage.json` and before it rewrote `report.json` leaves
/// the report of the stage before (seen: a resumed sweep then judged that
/// stale report, "memcheck not run", inconclusive).
fn complete_run(dir: &Path) -> bool {
    let (Ok(run), Ok(report)) = (
        rundir::read_json::<RunRecord>(&dir.join("run.json")),
        rundir::read_json::<Report>(&dir.join("report.json")),
    ) else {
        return false;
    };
    !run.interrupted
        && !report.interrupted
        && run.stages.iter().all(|tool| {
            dir.join(tool.name()).join("stage.json").is_file()
                && report
                    .stages
                    .iter()
                    .any(|stage| stage.tool == *tool && stage.end.is_some())
        })
}

/// Writes JSON in place at once (`crate::safe_files::write_atomic`).
fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), ExpectedError> {
    let write_error = |message: String| ExpectedError::Write {
        target: path.display().to_string(),
        message,
    };
    let text = serde_json::to_string_pretty(value).map_err(|e| write_error(e.to_string()))? + "\n";
    crate::safe_files::write_atomic(path, text.as_bytes()).map_err(|e| write_error(e.to_string()))
}

/// The most of a shard's `sweep.toml` that is read: a sweep file is a few
/// kilobytes; a directory from elsewhere may hold a FIFO or a link to
/// `/dev/zero` under that name.
const MAX_SWEEP_FILE_BYTES: u64 = 16 << 20;

/// A sweep directory's copy of its sweep file: a regular file, bounded.
fn read_sweep_file(path: &Path) -> std::io::Result<String> {
    let bytes = crate::safe_files::read_at_most(path, MAX_SWEEP_FILE_BYTES)?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}
