//! Running a shard of a sweep: each target not finished before is run by
//! `cudawatch run` (this same binary) in its own attempt directory, one
//! per GPU at a time, under the sweep's budget. The pool supervises the
//! children; this module decides what to run and records how each ended.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::dir::{Attempt, Manifest, SweepDir};
use super::file::{SweepFile, Target};
use super::shard::{self, Shard};
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::supervisor::child::{ChildSpec, Output};
use crate::supervisor::pool::{self, NotStartedWhy, PoolEnd, PoolEvent, Slot};

/// Settings a variable of ours would otherwise pass to every target's
/// run: each run writes its own directory and no report of its own.
const NOT_INHERITED: [&str; 5] = [
    "CUDAWATCH_OUT_DIR",
    "CUDAWATCH_REPORT",
    "CUDAWATCH_FORMAT",
    "CUDAWATCH_BASELINE",
    "CUDAWATCH_STREAM",
];
/// The most bytes of one file hashed into a target's checksum.
const CHECKSUM_LIMIT: u64 = 1 << 30;

/// How to run a sweep.
#[derive(Debug, Clone)]
pub struct ShardOptions {
    /// The GPUs to spread targets over; empty: one at a time, unpinned.
    pub gpus: Vec<String>,
    /// The wall time of the whole sweep.
    pub budget: Option<Duration>,
    /// Between SIGTERM and SIGKILL for a target's `cudawatch run`, which
    /// needs the time to stop its stage and write its report.
    pub grace: Duration,
    /// This binary.
    pub exe: PathBuf,
}

/// What the sweep tells its progress display.
pub enum SweepEvent<'a> {
    /// The shard's targets are known: `total` to do, `done_before` of
    /// them finished in an earlier run of this sweep.
    Planned {
        /// This shard's targets.
        total: usize,
        /// Finished before: skipped.
        done_before: usize,
    },
    /// A target started.
    Started {
        /// Its name.
        name: &'a str,
        /// Its attempt number.
        attempt: u32,
        /// The GPU it got.
        gpu: Option<&'a str>,
    },
    /// A target ended.
    Finished {
        /// Its name.
        name: &'a str,
        /// The record written.
        attempt: &'a Attempt,
        /// It came out as the sweep file expects (by its exit code).
        as_expected: bool,
    },
    /// A target finished in an earlier run of this sweep, and its command
    /// or the files it names changed since (checksum): it runs again.
    Changed {
        /// Its name.
        name: &'a str,
        /// The finished attempt that no longer stands for it.
        attempt: u32,
    },
    /// A target never started.
    NotStarted {
        /// Its name.
        name: &'a str,
        /// Why.
        why: NotStartedWhy,
    },
}

/// How a shard's run ended.
#[derive(Debug, Clone)]
pub struct ShardRun {
    /// This shard's targets.
    pub mine: Vec<String>,
    /// How the pool ended.
    pub end: PoolEnd,
    /// Wall time.
    pub seconds: f64,
}

/// Runs shard `shard` of `file` into `dir`.
// Over 100 lines on purpose: the shard's pool loop: its events share the
// sweep's state.
pub fn run_shard(
    file: &SweepFile,
    dir: &SweepDir,
    shard: Shard,
    durations: &BTreeMap<String, f64>,
    options: &ShardOptions,
    mut on_event: impl FnMut(SweepEvent<'_>),
) -> Result<ShardRun, ExpectedError> {
    let started = Instant::now();
    // Held to the end of the shard's run.
    let _held = dir.hold_shard(shard)?;
    let names: Vec<String> = file.targets.iter().map(|t| t.name.clone()).collect();
    let split = shard::assign(&names, shard.count, durations);
    let mut mine: Vec<&Target> = file
        .targets
        .iter()
        .zip(&split)
        .filter(|(_, s)| **s == shard.index)
        .map(|(t, _)| t)
        .collect();
    // Longest first (by last night's durations; the file's order without
    // them): a long target started last would leave the other GPUs idle.
    mine.sort_by(|a, b| {
        let d = |t: &Target| durations.get(&t.name).copied().unwrap_or(0.0);
        d(b).total_cmp(&d(a))
    });
    let mut manifest = Manifest {
        sweep_id: file.id(),
        index: shard.index,
        count: shard.count,
        targets: mine.iter().map(|t| t.name.clone()).collect(),
        started_at: jiff::Timestamp::now().to_string(),
        seconds: None,
    };
    dir.write_manifest(shard, &manifest)?;
    let mut jobs = Vec::new();
    let mut planned: Vec<(&Target, u32, Sums)> = Vec::new();
    // Targets run one per GPU at once, and each runs its own stages at
    // once: the CPUs are shared out between the targets (a target's own
    // `-j` or `CUDAWATCH_JOBS` wins).
    let stage_jobs = (std::thread::available_parallelism().map_or(1, |n| n.get())
        / options.gpus.len().max(1))
    .max(1)
    .to_string();
    let mut done_before = 0;
    for target in &mine {
        match resume(dir, target) {
            Resume::Done => {
                done_before += 1;
                continue;
            }
            Resume::Changed(attempt) => on_event(SweepEvent::Changed {
                name: &target.name,
                attempt,
            }),
            Resume::Run => {}
        }
        let attempt = dir.next_attempt(&target.name)?;
        let (_, stdout, stderr) = dir.attempt_files(&target.name, attempt);
        jobs.push(ChildSpec {
            argv: run_argv(options, target, &dir.attempt_dir(&target.name, attempt)),
            env: target
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .chain([("CUDAWATCH_COLOR".to_string(), "never".to_string())])
                .chain(
                    (std::env::var_os("CUDAWATCH_JOBS").is_none()
                        && !target.env.iter().any(|(k, _)| k == "CUDAWATCH_JOBS"))
                    .then(|| ("CUDAWATCH_JOBS".to_string(), stage_jobs.clone())),
                )
                .collect(),
            env_remove: NOT_INHERITED.iter().map(|s| s.to_string()).collect(),
            output: Output::Files { stdout, stderr },
            timeout: target.timeout,
            grace: options.grace,
            stream: false,
            cwd: Some(target.workdir.clone()),
            steer: None,
            flood: None,
            repeats: None,
        });
        planned.push((
            target,
            attempt,
            (
                checksum(target),
                super::tree::key(&target.workdir, &dir.path),
            ),
        ));
    }
    on_event(SweepEvent::Planned {
        total: mine.len(),
        done_before,
    });
    let deadline = options.budget.map(|b| started + b);
    let mut write_error = None;
    // What the pool says of job `index` of a batch whose jobs are
    // `planned[at(index)]`.
    let mut handle =
        |at: &dyn Fn(usize) -> usize, event: PoolEvent<'_>| -> Result<(), ExpectedError> {
            match event {
                PoolEvent::Started { index, slot, .. } => {
                    let (target, attempt, _) = &planned[at(index)];
                    on_event(SweepEvent::Started {
                        name: &target.name,
                        attempt: *attempt,
                        gpu: slot.as_deref(),
                    });
                }
                PoolEvent::Finished {
                    index,
                    slot,
                    end,
                    by_budget,
                } => {
                    let (target, attempt, sum) = &planned[at(index)];
                    let exit_code = match end.end {
                        cudawatch_model::ProcessEnd::Exited(code) => Some(code),
                        _ => None,
                    };
                    let setup_error = end.spawn_error.clone().or_else(|| {
                        matches!(exit_code, Some(exit_codes::SETUP_ERROR | exit_codes::USAGE))
                            .then(|| last_error_line(&dir.attempt_files(&target.name, *attempt).2))
                    });
                    let record = Attempt {
                        attempt: *attempt,
                        gpu: slot.clone(),
                        exit_code,
                        seconds: end.seconds,
                        timed_out: end.timed_out && !by_budget,
                        by_budget,
                        interrupted: end.interrupted,
                        setup_error,
                        checksum: sum.0.clone(),
                        tree: sum.1.clone(),
                        report_digest: dir.report_digest(&target.name, *attempt),
                    };
                    // The record is what makes a resume skip the target: a
                    // failure to write it is said, and the sweep goes on.
                    if let Err(e) = dir.write_attempt(&target.name, &record) {
                        write_error.get_or_insert(e);
                    }
                    let as_expected = crate::judge::sweep::as_expected(target.expect, exit_code);
                    on_event(SweepEvent::Finished {
                        name: &target.name,
                        attempt: &record,
                        as_expected,
                    });
                }
                PoolEvent::NotStarted { index, why } => {
                    let (target, attempt, _) = &planned[at(index)];
                    // Its reserved number is given back: nothing was started.
                    let (_, out, err) = dir.attempt_files(&target.name, *attempt);
                    let _ = (std::fs::remove_file(out), std::fs::remove_file(err));
                    on_event(SweepEvent::NotStarted {
                        name: &target.name,
                        why,
                    });
                }
            }
            Ok(())
        };
    let (narrow, wide) = split_by_width(jobs, &planned, &options.gpus);
    // The one-GPU targets over every GPU, one per GPU at once.
    let slots: Vec<Slot> = options.gpus.iter().cloned().map(Some).collect();
    let (narrow_at, narrow_jobs): (Vec<usize>, Vec<ChildSpec>) = narrow.into_iter().unzip();
    let mut end = pool::run_children(narrow_jobs, slots, deadline, |event| {
        handle(&|i| narrow_at[i], event)
    })?;
    // Then each target of several GPUs (a launcher of several processes),
    // alone, with the GPUs it needs: pinned to one, its ranks failed to
    // find theirs (`docs/distributed.md`).
    for (at, job, gpus) in wide {
        if end != PoolEnd::Completed {
            let why = match end {
                PoolEnd::Interrupted => pool::NotStartedWhy::Interrupted,
                _ => pool::NotStartedWhy::Budget,
            };
            handle(&|_| at, PoolEvent::NotStarted { index: 0, why })?;
            continue;
        }
        end = pool::run_children(vec![job], vec![gpus], deadline, |event| {
            handle(&|_| at, event)
        })?;
    }
    if let Some(e) = write_error {
        crate::render::stderr::warning(&format!("{e}; a resume will run that target again"));
    }
    manifest.seconds = Some(started.elapsed().as_secs_f64());
    dir.write_manifest(shard, &manifest)?;
    Ok(ShardRun {
        mine: manifest.targets,
        end,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// `cudawatch run` for one target, into `run_dir`.
fn run_argv(options: &ShardOptions, target: &Target, run_dir: &Path) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![
        options.exe.clone().into(),
        "run".into(),
        "--out-dir".into(),
        run_dir.into(),
    ];
    if let Some(stages) = &target.stages {
        argv.push("--stages".into());
        argv.push(stages.join(",").into());
    }
    if let Some(t) = target.stage_timeout {
        argv.push("--timeout".into());
        argv.push(t.to_string().into());
    }
    argv.extend(target.run_args.iter().map(OsString::from));
    argv.push("--".into());
    argv.extend(target.command.iter().map(OsString::from));
    argv
}

/// The last `error:` line of a run's stderr: why it could not start.
fn last_error_line(stderr: &Path) -> String {
    let text = crate::safe_files::read(stderr)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .map(str::to_string)
        .unwrap_or_else(|| "cudawatch run could not start the target (see its .err file)".into())
}

/// A job of several GPUs: its place in `planned`, the job, its GPUs.
type WideJob = (usize, ChildSpec, Slot);

/// The jobs of one GPU (with their place in `planned`), and those of a
/// launcher of several processes (torchrun `--nproc_per_node=N`,
/// accelerate, deepspeed) with the GPUs each gets: the first N of
/// `gpus`, every one when it does not say how many, unpinned when no GPU
/// is known.
fn split_by_width<T>(
    jobs: Vec<ChildSpec>,
    planned: &[(&Target, u32, T)],
    gpus: &[String],
) -> (Vec<(usize, ChildSpec)>, Vec<WideJob>) {
    let mut narrow = Vec::new();
    let mut wide = Vec::new();
    for (at, job) in jobs.into_iter().enumerate() {
        let command: Vec<std::ffi::OsString> =
            planned[at].0.command.iter().map(Into::into).collect();
        let several = crate::plan::launcher::multi_process(&command).filter(|l| l.several());
        match several {
            Some(launcher) if !gpus.is_empty() => {
                let n = launcher.per_node.map_or(gpus.len(), |n| n as usize);
                let slot = Some(gpus[..n.clamp(1, gpus.len())].join(","));
                wide.push((at, job, slot));
            }
            Some(_) => wide.push((at, job, None)),
            None => narrow.push((at, job)),
        }
    }
    (narrow, wide)
}

/// A target's checksum and its tree's key (`tree::key`), as its attempt
/// records them.
type Sums = (Option<String>, Option<String>);

/// What a resume does with a target.
enum Resume {
    /// It finished before, and its command and files are the same.
    Done,
    /// It finished before (this attempt), and has changed since.
    Changed(u32),
    /// It never finished.
    Run,
}

/// Whether `target` finished in an earlier run of the sweep with the same
/// command and files: a finished attempt whose recorded checksum differs
/// from the target's now checked other code, and the target runs again (a
/// record without a checksum, made where the files could not be read, is
/// trusted as before).
fn resume(dir: &SweepDir, target: &Target) -> Resume {
    let Some((attempt, record)) = dir.scan(&target.name).finished else {
        return Resume::Run;
    };
    // What its report found is unknown when it cannot be trusted.
    let report = dir.report(&target.name, attempt);
    if dir
        .untrusted_report(target, attempt, record.as_ref(), report.as_ref())
        .is_some()
    {
        return Resume::Changed(attempt);
    }
    let Some(record) = record else {
        return Resume::Done;
    };
    let changed = |then: Option<String>, now: Option<String>| matches!((then, now), (Some(a), Some(b)) if a != b);
    // The files its command names, or the code around them (a module it
    // imports, a script it sources: tree::key).
    if changed(record.checksum, checksum(target))
        || changed(record.tree, super::tree::key(&target.workdir, &dir.path))
    {
        Resume::Changed(attempt)
    } else {
        Resume::Done
    }
}

/// A hash of the command and of every file it names (the program, found
/// on PATH when it has no slash; scripts and inputs relative to the
/// working directory): the same checksum means the same program, night to
/// night. A resume also asks the tree (`tree::key`).
fn checksum(target: &Target) -> Option<String> {
    let mut hash = cudawatch_parsers::site::Fnv::default();
    for (i, arg) in target.command.iter().enumerate() {
        hash.write(arg.as_bytes());
        hash.write(&[0]);
        let path = if i == 0 && !arg.contains('/') {
            crate::executables::on_path(arg)
        } else {
            Some(target.workdir.join(arg)).filter(|p| p.is_file())
        };
        if let Some(path) = path {
            use std::io::Read;
            let file = std::fs::File::open(&path).ok()?;
            let mut reader = std::io::BufReader::new(file.take(CHECKSUM_LIMIT));
            let mut buf = [0u8; 64 * 1024];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => hash.write(&buf[..n]),
                    Err(_) => return None,
                }
            }
        }
    }
    Some(format!("{:016x}", hash.finish()))
}
