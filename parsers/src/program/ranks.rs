//! What a multi-process launcher adds to a program's output, read so the
//! findings say which rank they came from (seen on two H100s with torchrun
//! and NCCL, PyTorch 2.11; `sample-reports/multi/`):
//!
//! - every line a worker prints through Python's error path after
//!   `init_process_group` carries `[rankN]:` (and `torchrun --tee` /
//!   `--log-dir` put `[defaultN]:`, the local rank, in front of each
//!   line); a device assert's own line, printed by the GPU, carries none;
//! - torchrun's own traceback ends in `ChildFailedError` and a summary
//!   whose "Root Cause (first observed failure)" names the rank, local
//!   rank, exit code and pid of the worker that failed first;
//! - NCCL's watchdog: `[Rank 0] Watchdog caught collective operation
//!   timeout: WorkNCCL(SeqNum=11, OpType=ALLREDUCE, NumelIn=1, NumelOut=1,
//!   Timeout(ms)=40000) ran for 40080 milliseconds before timing out.`,
//!   then "Stack trace of the failed collective:" and `#3 <module> from
//!   /path/train.py:19` lines.

use crate::model::{FindingKind, Frame, ProcessRef, Severity, Site, SourceLocation, Tool};
use crate::site::new_site;

/// The rank a line was printed by, from its launcher's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    /// `[rankN]:`: the global rank.
    Rank(u32),
    /// `[defaultN]:`: the local rank (torchrun's `--tee`, `--log-dir`).
    Local(u32),
}

impl Tag {
    /// The process this tag names.
    pub fn process(self) -> ProcessRef {
        match self {
            Tag::Rank(rank) => ProcessRef::rank(rank),
            Tag::Local(local) => ProcessRef {
                local_rank: Some(local),
                ..ProcessRef::default()
            },
        }
    }
}

/// Each line without its launcher's prefix, and the tag the prefix gave.
pub fn untag<'a>(lines: &[&'a str]) -> (Vec<&'a str>, Vec<Option<Tag>>) {
    lines.iter().map(|line| split_tag(line)).unzip()
}

/// The line without its prefixes, and the tag they gave: with `--tee` a
/// worker's traceback line carries both (`[default1]:[rank1]: Traceback`);
/// the global rank wins over the local one.
fn split_tag(line: &str) -> (&str, Option<Tag>) {
    let (mut rest, mut tag) = (line, None);
    while let Some((after, found)) = one_tag(rest) {
        rest = after;
        if !matches!((tag, found), (Some(Tag::Rank(_)), Tag::Local(_))) {
            tag = Some(found);
        }
    }
    (rest, tag)
}

fn one_tag(line: &str) -> Option<(&str, Tag)> {
    for (open, make) in [
        ("[rank", Tag::Rank as fn(u32) -> Tag),
        ("[default", Tag::Local),
    ] {
        if let Some(rest) = line.strip_prefix(open)
            && let Some((number, rest)) = rest.split_once("]:")
            && let Ok(n) = number.parse::<u32>()
        {
            // `[rank1]: Traceback ...`: one space after the colon is the
            // launcher's; `[rank1]:[W1126 ...]` has none.
            return Some((rest.strip_prefix(' ').unwrap_or(rest), make(n)));
        }
    }
    None
}

/// The worker torchrun names as the first to fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootCause {
    /// Rank, local rank and pid.
    pub process: ProcessRef,
    /// Its exit code (`-6`: killed by SIGABRT).
    pub exit_code: Option<i64>,
}

/// torchrun's "Root Cause (first observed failure)" block.
pub fn root_cause(lines: &[&str]) -> Option<RootCause> {
    let start = lines.iter().position(|l| {
        l.trim_start()
            .starts_with("Root Cause (first observed failure)")
    })?;
    let mut process = ProcessRef::default();
    let mut exit_code = None;
    for line in lines[start + 1..].iter().take(12) {
        let line = line.trim();
        if line.starts_with("====") {
            break;
        }
        if let Some(value) = field(line, "rank") {
            // `1 (local_rank: 1)`
            let (rank, rest) = value.split_once(' ').unwrap_or((value, ""));
            process.rank = rank.parse().ok();
            process.local_rank = between(rest, "local_rank:", ")").and_then(|v| v.parse().ok());
        } else if let Some(value) = field(line, "exitcode") {
            // `1 (pid: 1051)`
            let (code, rest) = value.split_once(' ').unwrap_or((value, ""));
            exit_code = code.parse().ok();
            process.pid = between(rest, "pid:", ")").and_then(|v| v.parse().ok());
        }
    }
    (process.rank.is_some() || process.pid.is_some()).then_some(RootCause { process, exit_code })
}

/// `rank      : 1 (local_rank: 1)` → `1 (local_rank: 1)`.
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(name)?;
    let rest = rest.trim_start().strip_prefix(':')?;
    Some(rest.trim())
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let to = text[from..].find(end)? + from;
    Some(text[from..to].trim())
}

/// Whether a Python exception is the launcher's own report of a failed
/// worker, not the program's failure (torchrun's `ChildFailedError`).
pub fn is_launcher_exception(exception: &str) -> bool {
    exception.contains("ChildFailedError")
}

/// Every NCCL watchdog timeout in the output: a site per (rank,
/// collective), at the user's line that entered the collective.
pub fn collective_timeouts(lines: &[&str], tags: &[Option<Tag>]) -> Vec<Site> {
    const MARK: &str = "Watchdog caught collective operation timeout: WorkNCCL(";
    let mut sites: Vec<Site> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(start) = line.find(MARK) else {
            continue;
        };
        let work = &line[start + MARK.len()..];
        // `Timeout(ms)=40000) ran for ...`: the work's own parentheses.
        let work = work.split_once(") ran for").map_or(work, |(w, _)| w);
        let value = |key: &str| {
            work.split(", ")
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        };
        let op = value("OpType").unwrap_or_else(|| "a collective".into());
        let seq = value("SeqNum");
        let timeout_ms: Option<u64> = value("Timeout(ms)").and_then(|v| v.parse().ok());
        let rank = tags
            .get(i)
            .copied()
            .flatten()
            .map(Tag::process)
            .or_else(|| bracket_rank(line).map(ProcessRef::rank));
        let frames = collective_stack(&lines[i + 1..]);
        let user = crate::traceback::innermost_user_frame(&frames);
        let mut site = new_site(
            Tool::Plain,
            FindingKind::CollectiveTimeout,
            Severity::Error,
            format!(
                "waited in {op}{} until the process group's timeout{}: another rank never \
                 entered it",
                seq.as_deref()
                    .map(|s| format!(" (sequence {s})"))
                    .unwrap_or_default(),
                timeout_ms
                    .map(|ms| format!(" ({} s)", ms / 1000))
                    .unwrap_or_default(),
            ),
        );
        site.location = user.as_ref().and_then(|f| {
            Some(SourceLocation {
                file: f.file.clone()?,
                line: f.line?,
            })
        });
        site.python_frame = user;
        site.host_frames = frames;
        site.error = Some(format!("NCCL {op} timeout"));
        site.processes.extend(rank);
        // One site per collective, whatever line said it: the watchdog's
        // first line carries the stack, its exception repeats it without.
        let key = format!("{op}:{}", seq.unwrap_or_default());
        let mut identity = site.clone();
        identity.location = None;
        identity.python_frame = None;
        identity.host_frames.clear();
        site.id = crate::site::site_id(&identity, &key);
        match sites.iter_mut().find(|s| s.id == site.id) {
            Some(known) => {
                for p in site.processes {
                    if !known.processes.contains(&p) {
                        known.processes.push(p);
                        known.count += 1;
                    }
                }
                if known.location.is_none() && site.location.is_some() {
                    known.location = site.location;
                    known.python_frame = site.python_frame;
                    known.host_frames = site.host_frames;
                }
            }
            None => sites.push(site),
        }
    }
    sites
}

/// `[Rank 0]` inside a line, where no prefix said it.
fn bracket_rank(line: &str) -> Option<u32> {
    between(line, "[Rank ", "]")?.parse().ok()
}

/// The frames after "Stack trace of the failed collective:", outermost
/// first (as Python prints them) from `#0 all_reduce from FILE:LINE` lines,
/// which NCCL lists innermost first.
fn collective_stack(after: &[&str]) -> Vec<Frame> {
    let Some(start) = after
        .iter()
        .take(4)
        .position(|l| l.contains("Stack trace of the failed collective"))
    else {
        return Vec::new();
    };
    let mut frames: Vec<Frame> = after[start + 1..]
        .iter()
        .map_while(|l| {
            let rest = l.trim().strip_prefix('#')?;
            let (_, rest) = rest.split_once(' ')?;
            let (func, place) = rest.rsplit_once(" from ")?;
            let (file, line) = place.rsplit_once(':')?;
            Some(Frame {
                func: Some(func.to_string()),
                module: None,
                file: Some(file.to_string()),
                line: line.trim().parse().ok(),
                pc: None,
            })
        })
        .collect();
    frames.reverse();
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tees_prefix_and_the_rank_prefix_are_both_taken_off_the_rank_kept() {
        let (lines, tags) = untag(&[
            "[default1]:[rank1]: Traceback (most recent call last):",
            "[default1]:loss 0.5",
        ]);
        assert_eq!(lines, ["Traceback (most recent call last):", "loss 0.5"]);
        assert_eq!(tags, [Some(Tag::Rank(1)), Some(Tag::Local(1))]);
    }

    #[test]
    fn prefixes_are_taken_off_and_kept_as_tags() {
        let (lines, tags) = untag(&[
            "[rank1]: Traceback (most recent call last):",
            "[rank1]:[W1126 15:50:57.1 CUDAEvent.h:57] Warning",
            "[default0]:step 1",
            "/pytorch/aten/src/ATen/native/cuda/Loss.cu:245: assert",
        ]);
        assert_eq!(lines[0], "Traceback (most recent call last):");
        assert_eq!(lines[1], "[W1126 15:50:57.1 CUDAEvent.h:57] Warning");
        assert_eq!(
            tags,
            [
                Some(Tag::Rank(1)),
                Some(Tag::Rank(1)),
                Some(Tag::Local(0)),
                None
            ]
        );
    }

    #[test]
    fn torchruns_root_cause_names_the_first_failed_rank() {
        let text = "Root Cause (first observed failure):\n[0]:\n  time      : 2026-11-26_15:50:59\n  host      : localhost\n  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 1051)\n  error_file: <N/A>\n============";
        let lines: Vec<&str> = text.lines().collect();
        let cause = root_cause(&lines).unwrap();
        assert_eq!(cause.process.rank, Some(1));
        assert_eq!(cause.process.local_rank, Some(1));
        assert_eq!(cause.process.pid, Some(1051));
        assert_eq!(cause.exit_code, Some(1));
    }
}
