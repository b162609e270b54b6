//! One compute-sanitizer per rank of a launcher of several processes.
//!
//! One frontend around `torchrun` checks every worker (`--target-processes
//! all`) but writes one XML for all of them, and its records carry no
//! process (sample-reports/multi/oob_kernel_rank1/memcheck.*.xml): a bug on
//! rank 1 could not be named rank 1's. torchrun starts each worker as
//! `$PYTHON_EXEC -u script.py ...` (`torch/distributed/run.py`), so the
//! stage points `PYTHON_EXEC` at a script in its folder that runs the
//! worker's Python under a compute-sanitizer of its own, with that rank's
//! files: `TOOL.rankN.xml`, `TOOL.rankN.log` (the tool's text, out of the
//! worker's output that torchrun prefixes) and `TOOL.rankN.exit` (the
//! frontend's exit status). Each rank is judged by the stage's own rules,
//! and its sites name it.

use std::ffi::OsString;
use std::path::Path;

use cudawatch_model::{Outcome, ProcessEnd, ProcessRef, Tool, ToolSummary};
use cudawatch_parsers::builder::ReportBuilder;

use super::{output_complete, read_output_of, rule};
use crate::tools::{StageCommand, StageFile, StageFiles, StageJudged, StageRecord};

/// The script torchrun runs in place of Python, in the stage's folder.
pub const SCRIPT: &str = "rank-under-sanitizer.sh";
/// The frontend's own arguments (NUL between them), for the rules that
/// read the stage's command (launch selection, leak check).
const ARGV_FILE: &str = "rank-sanitizer.argv";
/// How many workers the launcher's arguments start, when they say.
const EXPECTED_FILE: &str = "rank-sanitizer.expected";
/// The stage's nonce, which each rank's script writes after its exit
/// status (`TOOL.rankN.exit`: `0 NONCE`).
const RANK_NONCE: &str = "CUDAWATCH_RANK_NONCE";

/// Whether `tool`'s stage runs a frontend per rank: memcheck and racecheck.
/// Not the tools whose stages flood on library kernels, because the flood
/// watch (which stops a flood and runs the stage again without call
/// stacks) reads the stage's own output, where a rank's records are not:
/// initcheck, which per rank on a DDP-with-AMP step and an FSDP step
/// printed about 20,000 uninitialised-read records per rank in ATen's
/// kernels and ran to the stage's 200 s limit (two H200s; one frontend
/// around torchrun: 120 s, the flood answered), and synccheck, which
/// floods on cuDNN's flash attention backward (460,352 records on
/// ViT-tiny, docs/tool-surprises.md). racecheck sums its hazards itself
/// and never floods; memcheck's records are each a bug's.
pub fn applies(tool: Tool) -> bool {
    matches!(tool, Tool::Memcheck | Tool::Racecheck)
}

/// Turns `command`, compute-sanitizer's argv around `program`, into the
/// program itself with `PYTHON_EXEC` at a script that runs each rank under
/// the same sanitizer. False (the command unchanged) when the argv is not
/// a sanitizer's around the program, or cannot be written into a script.
pub fn wrap(
    command: &mut StageCommand,
    tool: Tool,
    program: &[OsString],
    stage_dir: &Path,
    expected: Option<u32>,
) -> bool {
    let Some(frontend_len) = command.argv.len().checked_sub(program.len()) else {
        return false;
    };
    if frontend_len == 0 || command.argv[frontend_len..] != *program {
        return false;
    }
    let Some(mut frontend) = words(&command.argv[..frontend_len]) else {
        return false;
    };
    // Each rank saves its own XML; the stage's single one goes. So does
    // the exit code for "errors found": a rank's frontend that returns it
    // fails the worker in torchrun's eyes, and torchrun then stops the
    // other ranks. Measured on two GPUs: NCCL's kernel-image probe (an
    // error record, not a bug) on rank 1 of a correct DDP step made its
    // frontend exit 86, and rank 0 got SIGTERM before its summary
    // (sample-reports/multi/ddp_step/ranks-memcheck.stderr). The rules
    // read each rank's summary and records instead.
    for flag in ["--save", "--error-exitcode"] {
        if let Some(at) = frontend.iter().position(|w| w == flag) {
            frontend.drain(at..(at + 2).min(frontend.len()));
        }
    }
    if !frontend.iter().any(|w| w == "--tool") {
        return false;
    }
    // Absolute: the workers may change their working folder.
    let stage_dir = std::path::absolute(stage_dir).unwrap_or_else(|_| stage_dir.to_path_buf());
    let Some(dir) = stage_dir.to_str() else {
        return false;
    };
    let script = stage_dir.join(SCRIPT);
    let user_python = std::env::var("PYTHON_EXEC").ok();
    // Each rank's exit file carries it: one the run's scripts did not
    // write (a stale copy, a launcher's own) is not a rank's end.
    let nonce = crate::tools::record::nonce();
    command.files.push(StageFile {
        path: script.clone(),
        contents: script_text(tool, &frontend, (dir, &nonce), user_python.as_deref()),
        executable: true,
    });
    command.env.push((RANK_NONCE.into(), nonce));
    command.files.push(StageFile {
        path: stage_dir.join(ARGV_FILE),
        contents: frontend.join("\0"),
        executable: false,
    });
    // What the launcher's own arguments say it starts (`--nproc_per_node`),
    // against which the ranks' files are counted.
    if let Some(n) = expected {
        command.files.push(StageFile {
            path: stage_dir.join(EXPECTED_FILE),
            contents: n.to_string(),
            executable: false,
        });
    }
    command.argv = program.to_vec();
    command.env.retain(|(k, _)| k != "PYTHON_EXEC");
    command
        .env
        .push(("PYTHON_EXEC".into(), script.display().to_string()));
    true
}

/// The words of `argv`, if every one is UTF-8 (the script is text).
fn words(argv: &[OsString]) -> Option<Vec<String>> {
    argv.iter()
        .map(|a| a.to_str().map(str::to_string))
        .collect()
}

/// `word` quoted for sh.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The script. The worker's Python is torchrun's own (`sys.executable`):
/// the first word of its parent's command line, which is the interpreter
/// of torchrun's `#!` line (a virtual environment's `bin/python`), or the
/// user's own `PYTHON_EXEC`. Signals torchrun sends the worker (SIGTERM
/// when another rank failed) go on to the frontend, which then still writes
/// its files; the script waits for it and keeps its exit status.
fn script_text(
    tool: Tool,
    frontend: &[String],
    (dir, nonce): (&str, &str),
    user_python: Option<&str>,
) -> String {
    let python = match user_python {
        Some(p) => format!("python={}", quoted(p)),
        // A parent that is not a Python (a launcher between torchrun and
        // its workers) gives `python3` from PATH instead.
        None => "python=$(tr '\\000' '\\n' <\"/proc/$PPID/cmdline\" 2>/dev/null | head -n 1)\n\
                 case \"${python##*/}\" in python*) ;; *) python=python3 ;; esac"
            .to_string(),
    };
    let frontend: Vec<String> = frontend.iter().map(|w| quoted(w)).collect();
    let out = quoted(&format!("{dir}/{}.rank", tool.name()));
    format!(
        "#!/bin/sh\n\
         # Written by cudawatch for its {tool} stage (docs/distributed.md):\n\
         # torchrun starts each rank through this script (PYTHON_EXEC) in place\n\
         # of Python, so each rank runs under a compute-sanitizer of its own and\n\
         # leaves its own files: {tool}.rankN.xml, .log and .exit.\n\
         rank=${{RANK:-pid$$}}\n\
         # An elastic restart's workers keep the first attempt's files.\n\
         attempt=${{TORCHELASTIC_RESTART_COUNT:-0}}\n\
         [ \"$attempt\" = 0 ] || rank=\"$rank.restart$attempt\"\n\
         out={out}\"$rank\"\n\
         # How many ranks this worker was told the job has.\n\
         [ -n \"${{WORLD_SIZE:-}}\" ] && echo \"$WORLD_SIZE\" >\"$out.world\"\n\
         {python}\n\
         child=\n\
         trap '[ -n \"$child\" ] && kill -TERM \"$child\" 2>/dev/null' TERM INT HUP\n\
         exec 3<&0\n\
         {frontend} --save \"$out.xml\" --log-file \"$out.log\" \"$python\" \"$@\" <&3 3<&- &\n\
         child=$!\n\
         while :; do\n\
         \x20 wait \"$child\"\n\
         \x20 status=$?\n\
         \x20 kill -0 \"$child\" 2>/dev/null || break\n\
         done\n\
         echo \"$status {nonce}\" >\"$out.exit\"\n\
         exit \"$status\"\n",
        tool = tool.name(),
        frontend = frontend.join(" "),
    )
}

/// Whether the stage ran its ranks under frontends of their own.
pub fn ran_per_rank(files: &StageFiles) -> bool {
    files.path(ARGV_FILE).exists()
}

/// compute-sanitizer's line when the worker did not connect to it within
/// its launch timeout.
const NEVER_ATTACHED: &str = "No attachable process found";

/// One rank's judgement.
struct RankJudged {
    who: ProcessRef,
    outcome: Outcome,
    reason: String,
    summary: ToolSummary,
}

/// Reads every rank's files into `builder` (each site naming its rank)
/// and judges the stage (`combine`).
pub fn read(builder: &mut ReportBuilder, files: &StageFiles, record: &StageRecord) -> StageJudged {
    let tool = record.tool;
    // Facts of the whole stage first: not run on purpose (blocked by the
    // plain run's out-of-memory error), or never started.
    if (record.not_applicable.is_some() || record.spawn_error.is_some())
        && let Some((outcome, reason)) =
            crate::tools::outcome::process_problem(record, tool.name(), super::rules::MISSING)
    {
        return StageJudged {
            outcome,
            reason,
            summary: ToolSummary::default(),
        };
    }
    let frontend: Vec<String> = String::from_utf8_lossy(&files.read(ARGV_FILE))
        .split('\0')
        .map(str::to_string)
        .collect();
    let stage_text = files.read_program_beside("stdout", Some(super::LINE_PREFIX));
    let usage = String::from_utf8_lossy(&stage_text).contains("Usage: compute-sanitizer");
    let complete = output_complete(&files.sibling(Tool::Plain, "stdout"), &stage_text);
    let nonce = crate::tools::env_value(&record.env, RANK_NONCE);
    let mut judged: Vec<RankJudged> = Vec::new();
    for label in rank_labels(files, tool) {
        let who = process_of(&label, record);
        let stem = format!("{}.{label}", tool.name());
        let (evidence, _) = read_output_of(
            builder,
            files,
            tool,
            &format!("{stem}.xml"),
            &format!("{stem}.log"),
            Some(&who),
        );
        let never_attached = evidence
            .summary
            .failures
            .iter()
            .find(|l| l.contains(NEVER_ATTACHED))
            .cloned();
        let (outcome, reason) = match exit_of(files, &stem, nonce) {
            RankExit::NotThisRuns => (
                Outcome::Inconclusive,
                format!(
                    "its exit file ({stem}.exit) was not written by this run's script (no \
                     nonce of this stage in it: a stale copy, or another process's), so \
                     nothing says the rank was checked to its end"
                ),
            ),
            // Before the stage's timeout: the worker ran unchecked (and,
            // seen on two H200s with eight two-rank programs at once, hung
            // until that timeout).
            _ if never_attached.is_some() => (
                Outcome::Inconclusive,
                format!(
                    "its compute-sanitizer never attached to the worker (\"{}\"), so the \
                     rank ran unchecked; with many programs at once on this host, run fewer",
                    never_attached.unwrap_or_default()
                ),
            ),
            RankExit::Ended(end) => {
                let mut rank_record = record.clone();
                rank_record.command = frontend.clone();
                rank_record.end = end;
                rule(&rank_record, &evidence, usage, complete)
            }
            RankExit::Missing if evidence.folded > 0 => (
                Outcome::Findings,
                format!(
                    "{} reported before its compute-sanitizer was stopped",
                    crate::words::plural(evidence.folded, "error")
                ),
            ),
            RankExit::Missing => (
                Outcome::Inconclusive,
                "its compute-sanitizer was stopped before it ended (no exit status)".into(),
            ),
        };
        judged.push(RankJudged {
            who,
            outcome,
            reason,
            summary: evidence.summary,
        });
    }
    let judged = combine(tool, judged, record, told_world(files, tool));
    launcher_ended_well(judged, record)
}

/// A clean stage from its ranks stands only if the launcher around them
/// ended as a program that ran to its end does: one that exited non-zero
/// or died of a signal after every rank's sanitizer ended clean (a worker
/// it restarted, one that never reached the wrapper, its own crash) ran
/// something no rank's file accounts for.
fn launcher_ended_well(judged: StageJudged, record: &StageRecord) -> StageJudged {
    if judged.outcome != Outcome::Clean || record.end == ProcessEnd::Exited(0) {
        return judged;
    }
    let launcher = record
        .command
        .iter()
        .find(|a| !a.contains("compute-sanitizer"))
        .map_or("the launcher", |a| a.rsplit('/').next().unwrap_or(a));
    StageJudged {
        outcome: Outcome::Inconclusive,
        reason: format!(
            "{launcher} {} after its ranks' {} ended clean, so something ran that no rank's \
             output accounts for; of the ranks: {}",
            crate::tools::outcome::describe_end(record.end),
            record.tool.name(),
            judged.reason
        ),
        summary: judged.summary,
    }
}

/// The most ranks the workers' own `WORLD_SIZE` or the launcher's
/// arguments said the job has, from the stage's files.
fn told_world(files: &StageFiles, tool: Tool) -> u32 {
    let number = |name: &str| -> Option<u32> {
        String::from_utf8_lossy(&files.read(name))
            .trim()
            .parse()
            .ok()
    };
    let prefix = format!("{}.", tool.name());
    files
        .names(&format!("{prefix}rank"), ".world")
        .iter()
        .filter_map(|name| number(name))
        .chain(number(EXPECTED_FILE))
        .max()
        .unwrap_or(0)
}

/// `rank0`, `rank1`, `rankpid4242` (a worker without `RANK`): the ranks
/// that left any file, in rank order.
fn rank_labels(files: &StageFiles, tool: Tool) -> Vec<String> {
    let prefix = format!("{}.", tool.name());
    let mut labels: Vec<String> = Vec::new();
    for suffix in [".xml", ".log", ".exit", ".world"] {
        for name in files.names(&format!("{prefix}rank"), suffix) {
            if let Some(label) = name
                .strip_prefix(&prefix)
                .and_then(|n| n.strip_suffix(suffix))
            {
                labels.push(label.to_string());
            }
        }
    }
    labels.sort_by_key(|l| (rank_number(l).unwrap_or(u32::MAX), l.clone()));
    labels.dedup();
    labels
}

/// `rank1` and an elastic restart's `rank1.restart2` are rank 1.
fn rank_number(label: &str) -> Option<u32> {
    let digits: String = label
        .strip_prefix("rank")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The process a label names, with the pid and GPU the stage saw it use.
fn process_of(label: &str, record: &StageRecord) -> ProcessRef {
    let mut who = match rank_number(label) {
        Some(rank) => ProcessRef::rank(rank),
        None => ProcessRef {
            pid: label.strip_prefix("rankpid").and_then(|p| p.parse().ok()),
            ..ProcessRef::default()
        },
    };
    crate::tools::ranks::complete(&mut who, record);
    who
}

/// How a rank's frontend ended, as its exit file says.
enum RankExit {
    /// The status the script kept.
    Ended(ProcessEnd),
    /// No status (the frontend was stopped before it ended).
    Missing,
    /// A status without the stage's nonce: not this run's script's.
    NotThisRuns,
}

/// How a rank's frontend ended, from the status the script kept (a shell
/// gives 128+N for a death by signal N) after checking the stage's
/// `nonce` beside it (a run directory from before nonces has none).
fn exit_of(files: &StageFiles, stem: &str, nonce: Option<&str>) -> RankExit {
    let text = String::from_utf8_lossy(&files.read(&format!("{stem}.exit"))).into_owned();
    let mut words = text.split_whitespace();
    let Some(status) = words.next().and_then(|w| w.parse::<i32>().ok()) else {
        return RankExit::Missing;
    };
    if nonce.is_some_and(|n| words.next() != Some(n)) {
        return RankExit::NotThisRuns;
    }
    RankExit::Ended(match status {
        129..=192 => ProcessEnd::Signaled(status - 128),
        code => ProcessEnd::Exited(code),
    })
}

/// The stage from its ranks: clean only when every rank the program ran is
/// there and clean; findings when every rank was checked to its end and
/// some found any; otherwise the first rank that could not vouch decides.
fn combine(
    tool: Tool,
    mut judged: Vec<RankJudged>,
    record: &StageRecord,
    told: u32,
) -> StageJudged {
    // Every rank any witness knows of: the GPU sampler's workers, what the
    // workers were told (WORLD_SIZE), the launcher's arguments and the
    // highest rank that left a file. "Saw nothing" never means one rank.
    let highest = judged
        .iter()
        .filter_map(|j| j.who.rank)
        .max()
        .map_or(0, |r| r + 1);
    let world = crate::tools::ranks::world_size(record)
        .unwrap_or(0)
        .max(told)
        .max(highest);
    let missing: Vec<u32> = (0..world)
        .filter(|r| !judged.iter().any(|j| j.who.rank == Some(*r)))
        .collect();
    for rank in &missing {
        judged.push(RankJudged {
            who: ProcessRef::rank(*rank),
            outcome: Outcome::Inconclusive,
            reason: format!("left no {} output", tool.name()),
            summary: ToolSummary::default(),
        });
    }
    if judged.is_empty() {
        return StageJudged {
            outcome: Outcome::Inconclusive,
            reason: format!(
                "no rank ran under {}: the launcher did not start its workers through \
                 {SCRIPT} (PYTHON_EXEC); see {}/stdout",
                tool.name(),
                tool.name()
            ),
            summary: ToolSummary::default(),
        };
    }
    // A rank that could not vouch keeps the stage from vouching, whatever
    // the others found: its findings are sites of their own and gate as
    // such, but "findings" would read as a stage that checked every rank
    // (and found only what does not gate).
    let outcome = if let Some(first) = judged
        .iter()
        .find(|j| !matches!(j.outcome, Outcome::Clean | Outcome::Findings))
    {
        first.outcome
    } else if judged.iter().any(|j| j.outcome == Outcome::Findings) {
        Outcome::Findings
    } else {
        Outcome::Clean
    };
    let first = &judged[0].reason;
    let reason = if judged.len() > 1 && judged.iter().all(|j| &j.reason == first) {
        format!("every rank ({}): {first}", judged.len())
    } else {
        // The ranks that decided the stage's outcome first (the stage table
        // shows the reason's start), then the others with something to
        // say, each by its rank alone: the sites carry the pid and GPU.
        let mut order: Vec<&RankJudged> = judged.iter().collect();
        order.sort_by_key(|j| (j.outcome != outcome, j.outcome == Outcome::Clean));
        order
            .iter()
            .map(|j| {
                let who = j
                    .who
                    .rank
                    .map_or_else(|| j.who.describe(), |r| format!("rank {r}"));
                format!("{who}: {}", j.reason)
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    StageJudged {
        outcome,
        reason,
        summary: judged.iter().fold(ToolSummary::default(), |mut total, j| {
            total.add(&j.summary);
            total
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_runs_the_workers_python_under_the_stages_own_frontend() {
        let mut command = StageCommand {
            argv: [
                "/cuda/bin/compute-sanitizer",
                "--tool",
                "memcheck",
                "--xml",
                "--save",
                "/runs/a b/memcheck/memcheck.xml",
                "--print-limit",
                "0",
                "--error-exitcode",
                "86",
                "--target-processes",
                "all",
                "torchrun",
                "--nproc_per_node=2",
                "it's.py",
            ]
            .map(OsString::from)
            .to_vec(),
            ..StageCommand::default()
        };
        let program: Vec<OsString> = ["torchrun", "--nproc_per_node=2", "it's.py"]
            .map(OsString::from)
            .to_vec();
        assert!(wrap(
            &mut command,
            Tool::Memcheck,
            &program,
            Path::new("/runs/a b/memcheck"),
            Some(2)
        ));
        assert_eq!(command.argv, program, "the stage runs the launcher itself");
        let script = &command.files[0];
        assert!(script.executable);
        assert!(
            command
                .env
                .contains(&("PYTHON_EXEC".into(), script.path.display().to_string()))
        );
        let text = &script.contents;
        assert!(
            text.contains(
                "'/cuda/bin/compute-sanitizer' '--tool' 'memcheck' '--xml' '--print-limit' '0' \
                 '--target-processes' 'all' --save \"$out.xml\" --log-file \"$out.log\" \"$python\" \"$@\""
            ),
            "{text}"
        );
        assert!(text.contains("out='/runs/a b/memcheck/memcheck.rank'\"$rank\""));
        assert!(!text.contains("memcheck.xml"), "no stage-wide XML: {text}");
        assert_eq!(
            command.files[1].contents,
            [
                "/cuda/bin/compute-sanitizer",
                "--tool",
                "memcheck",
                "--xml",
                "--print-limit",
                "0",
                "--target-processes",
                "all"
            ]
            .join("\0")
        );
    }

    #[test]
    fn a_stage_blocked_by_the_plain_runs_failure_is_skipped_not_missing_its_ranks() {
        // oom_rank1 on two H200s: the stages never ran, and reading their
        // ranks first made them "no rank ran" (inconclusive, exit 3).
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(ARGV_FILE),
            "compute-sanitizer\0--tool\0memcheck",
        )
        .unwrap();
        let files = StageFiles::new(dir.path(), Tool::Memcheck);
        assert!(ran_per_rank(&files));
        let mut record = StageRecord::unfinished(Tool::Memcheck);
        record.unfinished = false;
        record.not_applicable = Some(format!(
            "{}the plain run's out-of-memory error",
            cudawatch_model::BLOCKED
        ));
        let mut builder = ReportBuilder::new("test");
        let judged = read(&mut builder, &files, &record);
        assert_eq!(judged.outcome, Outcome::Skipped, "{}", judged.reason);
        assert!(judged.reason.starts_with("blocked by"), "{}", judged.reason);
    }

    #[test]
    fn a_command_that_is_not_a_sanitizer_around_the_program_is_left_alone() {
        let program: Vec<OsString> = vec!["torchrun".into(), "t.py".into()];
        let mut command = StageCommand {
            argv: program.clone(),
            ..StageCommand::default()
        };
        assert!(!wrap(
            &mut command,
            Tool::Memcheck,
            &program,
            Path::new("/d"),
            None
        ));
        assert!(command.files.is_empty());
    }

    #[test]
    fn an_elastic_restarts_rank_keeps_its_first_attempts_files_and_is_the_same_rank() {
        // A restart rewrote memcheck.rank1.*: the first attempt's errors
        // vanished. Each attempt now writes its own files, all read.
        let text = script_text(Tool::Memcheck, &["cs".into()], ("/d", "n0nce"), None);
        assert!(
            text.contains("echo \"$status n0nce\" >\"$out.exit\""),
            "{text}"
        );
        assert!(text.contains("TORCHELASTIC_RESTART_COUNT"), "{text}");
        assert!(text.contains("rank=\"$rank.restart$attempt\""), "{text}");
        assert!(text.contains(">\"$out.world\""), "{text}");
        assert_eq!(rank_number("rank1"), Some(1));
        assert_eq!(rank_number("rank1.restart2"), Some(1));
        assert_eq!(rank_number("rankpid77"), None);
    }
}
