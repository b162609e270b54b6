//! The GPU core dump: the program run plainly with the CUDA driver's core
//! dump on exception, each dump read back by cuda-gdb, and a finding at the
//! faulting kernel and line. It answers at the program's own speed where
//! the sanitizers run it 2-100x slower, and inside CUDA graphs, where
//! `CUDA_LAUNCH_BLOCKING=1` cannot say which kernel faulted
//! (`sample-reports/coredump/`, `docs/coredump.md`).
//!
//! It runs after a plain run that met a device exception (an illegal or
//! misaligned address, an assert, an illegal instruction); otherwise a dump
//! would never be written, and the stage is not needed. One dump per
//! process (`core.PID`): the rank is named from the process's environment.
//! Dumps are deleted once read unless the user keeps them (`--keep-dumps`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cudawatch_model::{FindingKind, Outcome, ProcessEnd, ProcessRef, Site, ToolSummary};
use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::coredump::{Fault, read_progress, read_reader, site};

use super::outcome::{describe_end, process_problem};
use super::{
    FollowUp, FollowUpContext, StageCommand, StageContext, StageFiles, StageJudged, StageKind,
    StageRecord,
};
use crate::words::plural;

/// The core dump's kind.
pub struct Coredump;

/// What the dump leaves out: the GPU's global, shared and local memory and
/// the ELF images not relocated. Measured on the H100 (driver 580, CUDA
/// 13.0): a Triton kernel's dump from 139 MB to 14 MB, a CUDA graph's from
/// 14 MB to 0.5 MB, each read as well as the full one; a full dump holds
/// all the program's GPU memory (tens of GB for a training job). Not
/// `skip_abort`: without the abort a misaligned store ran on and the
/// program exited 0, and a graph's process died of SIGSEGV.
pub const GENERATION_FLAGS: &str =
    "skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory";

/// How long one dump's reading may take (each took under a second).
const READ_LIMIT: Duration = Duration::from_secs(120);

/// The prefix of each dump's file name; the driver puts the pid after it.
const DUMP_PREFIX: &str = "core.";

impl StageKind for Coredump {
    /// The program as it runs, and the dump's writing, which holds no more
    /// on the GPU.
    fn gpu_need_mib(&self, _tool: cudawatch_model::Tool, peak: u64) -> u64 {
        super::with_margin(peak, 1.1, 512)
    }

    /// It stops at the first device exception.
    fn relative_cost(&self, _tool: cudawatch_model::Tool) -> u32 {
        1
    }

    fn command(&self, ctx: &StageContext<'_>) -> StageCommand {
        let mut command = StageCommand::program(ctx);
        let file = ctx.stage_dir.join(format!("{DUMP_PREFIX}%p"));
        command.env.extend([
            ("CUDA_ENABLE_COREDUMP_ON_EXCEPTION".into(), "1".into()),
            ("CUDA_COREDUMP_SHOW_PROGRESS".into(), "1".into()),
            (
                "CUDA_COREDUMP_GENERATION_FLAGS".into(),
                GENERATION_FLAGS.into(),
            ),
            ("CUDA_COREDUMP_FILE".into(), file.display().to_string()),
            // The host's own core dump of the abort that follows is not ours
            // to write.
            ("CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION".into(), "0".into()),
        ]);
        command
    }

    fn after_plain(&self, command: &mut StageCommand, plain: &StageRecord) {
        // Run for a signal alone, its rule must know: no dump then means
        // the host crashed, not the GPU.
        if plain
            .device_exception
            .as_deref()
            .is_some_and(|e| e.starts_with(super::plain::SIGNAL_ONLY))
        {
            command.env.push((FOR_SIGNAL.into(), "1".into()));
        }
        if plain.device_exception.is_none() && command.not_applicable.is_none() {
            command.not_applicable = Some(format!(
                "{} the plain run met no device exception (the driver writes a core dump only \
                 at one)",
                cudawatch_model::NOT_NEEDED
            ));
        }
    }

    fn follow_ups(
        &self,
        stage: &FollowUpContext<'_>,
        started: &[String],
        _finished: &[String],
    ) -> Vec<FollowUp> {
        let Some(reader) = &stage.tools.cuda_gdb else {
            return Vec::new();
        };
        dumps(stage.stage_dir)
            .into_iter()
            .filter(|(pid, _)| !started.contains(&read_name(*pid)))
            .map(|(pid, dump)| FollowUp {
                name: read_name(pid),
                argv: reader_argv(reader, &dump),
                env: Vec::new(),
                env_remove: Vec::new(),
                stdout: stage.stage_dir.join(format!("{}.txt", read_name(pid))),
                stderr: stage.stage_dir.join(format!("{}.err", read_name(pid))),
                timeout: Some(READ_LIMIT),
            })
            .collect()
    }

    fn after_follow_ups(&self, stage: &FollowUpContext<'_>) {
        if stage.keep_dumps {
            return;
        }
        for (_, dump) in dumps(stage.stage_dir) {
            let _ = std::fs::remove_file(dump);
        }
    }

    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged {
        let output = files.program_output();
        let text = String::from_utf8_lossy(&output);
        let (mut sites, unread) = sites_of(files, &text);
        super::ranks::attribute(&mut sites, record);
        let found = builder.coredump_sites(&files.rel("stderr"), sites.clone());
        let (outcome, reason) = rule(record, &sites, unread);
        StageJudged {
            outcome,
            reason,
            summary: ToolSummary {
                errors: Some(found as u64),
                // Failed again without a dump: the plain run's failure,
                // already reported, is what it met (`judge::blocked`).
                target_failed: sites.is_empty() && record.end != ProcessEnd::Exited(0),
                ..ToolSummary::default()
            },
        }
    }
}

/// `cuda-gdb-minimal -nx -batch -ex "target cudacore DUMP" -ex "info cuda
/// kernels" -ex bt`: the exception, the faulting kernel and line, the
/// focus (block, thread, device) and the kernel's launch shape.
pub fn reader_argv(reader: &Path, dump: &Path) -> Vec<OsString> {
    let mut target = OsString::from("target cudacore ");
    target.push(dump);
    vec![
        reader.into(),
        "-nx".into(),
        "-batch".into(),
        "-ex".into(),
        target,
        "-ex".into(),
        "info cuda kernels".into(),
        "-ex".into(),
        "bt".into(),
    ]
}

/// What the reader of one dump writes: `read-PID.txt` (and `.err`).
const READ_PREFIX: &str = "read-";

fn read_name(pid: u32) -> String {
    format!("{READ_PREFIX}{pid}")
}

/// The dumps in the stage's folder, by the pid that wrote each.
fn dumps(stage_dir: &Path) -> Vec<(u32, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(stage_dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let pid = name.strip_prefix(DUMP_PREFIX)?.parse().ok()?;
            Some((pid, e.path()))
        })
        .collect();
    found.sort();
    found
}

/// The pids whose dump was read (a `read-PID.txt` the reader wrote).
fn reads(stage_dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(stage_dir) else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_prefix("read-")?
                .strip_suffix(".txt")?
                .parse()
                .ok()
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// One site per dump: what cuda-gdb read from it, else what the driver's
/// progress lines said of it (the exception and the mangled kernel, no
/// line). A dump read with no progress line (a program that closed or
/// redirected its stderr) counts too. Returns the sites and how many dumps
/// no reader could read.
fn sites_of(files: &StageFiles, text: &str) -> (Vec<Site>, usize) {
    let asserts: Vec<Site> = cudawatch_parsers::program::parse(text.as_bytes())
        .into_iter()
        .filter(|s| s.kind == FindingKind::DeviceAssert)
        .collect();
    let read = reads(files.dir());
    // Each dump by its pid, with what the progress lines said of it.
    let mut dumps: Vec<(Option<u32>, Option<Fault>)> = read_progress(text)
        .into_iter()
        .map(|(fault, path)| (path.as_deref().and_then(pid_of_dump), Some(fault)))
        .collect();
    for pid in &read {
        if !dumps.iter().any(|(p, _)| *p == Some(*pid)) {
            dumps.push((Some(*pid), None));
        }
    }
    let mut sites = Vec::new();
    let mut unread = 0;
    for (pid, progress) in dumps {
        let from_reader = pid.filter(|p| read.contains(p)).and_then(|p| {
            read_reader(&String::from_utf8_lossy(
                &files.read(&format!("{}.txt", read_name(p))),
            ))
        });
        if from_reader.is_none() {
            unread += 1;
        }
        let Some(fault) = from_reader.or(progress) else {
            continue;
        };
        let dump = pid.map(|p| format!("{DUMP_PREFIX}{p}")).unwrap_or_default();
        let mut site = site(&fault, &dump);
        with_assert_line(&mut site, &fault, &asserts);
        if let Some(pid) = pid {
            site.processes.push(ProcessRef {
                pid: Some(pid),
                gpu: fault.device.clone(),
                ..ProcessRef::default()
            });
        }
        sites.push(site);
    }
    (sites, unread)
}

/// A device assert's dump names the kernel but no line (`Assertion
/// failed.`); the program's own assert message, in the same output, has
/// the file and line: the site takes them when it names the same kernel.
fn with_assert_line(site: &mut Site, fault: &Fault, asserts: &[Site]) {
    if site.kind != FindingKind::DeviceAssert || fault.location.is_some() {
        return;
    }
    let bare = |k: &str| cudawatch_parsers::site::bare_kernel_name(k).to_string();
    let Some(kernel) = site.kernel.as_deref().map(bare) else {
        return;
    };
    if let Some(assert) = asserts
        .iter()
        .find(|a| a.kernel.as_deref().map(bare).as_deref() == Some(kernel.as_str()))
    {
        site.location = assert.location.clone();
        site.id = cudawatch_parsers::site::site_id(site, "coredump");
    }
}

fn pid_of_dump(path: &str) -> Option<u32> {
    name_only(path).strip_prefix(DUMP_PREFIX)?.parse().ok()
}

fn name_only(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Set on the stage when the plain run died of a signal and printed no
/// device exception cudawatch recognised.
const FOR_SIGNAL: &str = "CUDAWATCH_COREDUMP_FOR_SIGNAL";

/// The core-dump stage: each dump is a finding; a program that failed
/// without writing one left nothing to read.
pub fn rule(record: &StageRecord, sites: &[Site], unread: usize) -> (Outcome, String) {
    // A dump written before a time limit or a stop still stands.
    if let Some(problem) = process_problem(record, "the program", "")
        && sites.is_empty()
    {
        return problem;
    }
    if sites.is_empty() {
        if super::env_value(&record.env, FOR_SIGNAL).is_some() {
            return (
                Outcome::Skipped,
                format!(
                    "{} the plain run died of a signal, and under the core dump the program {} \
                     with no core dump written: the GPU met no exception, the crash was the \
                     host's",
                    cudawatch_model::NOT_NEEDED,
                    describe_end(record.end)
                ),
            );
        }
        return match record.end {
            ProcessEnd::Exited(0) => (
                Outcome::Clean,
                "the program met no device exception this time: no core dump was written".into(),
            ),
            end => (
                Outcome::Inconclusive,
                format!(
                    "the program {} without writing a core dump: the driver wrote none (is the \
                     failure a device exception this time?)",
                    describe_end(end)
                ),
            ),
        };
    }
    let first = &sites[0];
    // A jump to where no code is, or code the GPU cannot run, has no line
    // of the kernel's to give, however it was built.
    let no_line = match first.kind {
        FindingKind::InvalidPc | FindingKind::IllegalInstruction => {
            "no line (the faulting address holds no code of the kernel's)"
        }
        _ => "no line (built without -lineinfo?)",
    };
    let at = first
        .location
        .as_ref()
        .map_or_else(|| no_line.to_string(), |l| l.short());
    let mut reason = format!(
        "{} read: {} in {} at {at}",
        plural(sites.len() as u64, "core dump"),
        first
            .message
            .trim_start_matches("GPU core dump: ")
            .split(" in ")
            .next()
            .unwrap_or(""),
        first.kernel.as_deref().unwrap_or("an unnamed kernel"),
    );
    if unread > 0 {
        // No reader ran at all: none was found.
        let why = if record.imports.is_empty() {
            "no cuda-gdb was found on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin"
        } else {
            "cuda-gdb could not read it: its output is in read-PID.err"
        };
        reason.push_str(&format!(
            "; {} not read ({why}): kernel and exception from the driver's progress lines",
            plural(unread as u64, "dump")
        ));
    }
    (Outcome::Findings, reason)
}
