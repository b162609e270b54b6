//! The global-race stage: the program with cudawatch's own Sanitizer API
//! tool (`native/global-race/`) loaded through `LD_PRELOAD`, which checks
//! every global memory access of every launch for races between threads
//! (racecheck sees shared memory only). The tool writes its lines and each
//! module's cubin into the stage's folder; `nvdisasm -g` then gives each
//! module's SASS with its line table, which places a race on its lines
//! (docs/global-race.md). Opt-in: `--stages ...,global-race`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cudawatch_model::{Outcome, Owner, ProcessEnd, Tool};
use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::global_race::{Launch, LineTable, Output, function_name};

use super::outcome::{describe_end, process_problem};
use super::{
    FollowUp, FollowUpContext, StageCommand, StageContext, StageFiles, StageJudged, StageKind,
    StageRecord,
};
use crate::words::plural;

/// The tool's lines, in the stage's folder.
const LINES: &str = "global-race.jsonl";

/// The global-race kind.
pub struct GlobalRace;

impl StageKind for GlobalRace {
    /// The program's memory, and the tool's shadow memory per context
    /// (about 330 MiB: `native/global-race/global_race.cpp`).
    fn gpu_need_mib(&self, _tool: Tool, peak: u64) -> u64 {
        super::with_margin(peak, 1.1, 1024)
    }

    /// Each access runs the tool's code, as memcheck's does.
    fn relative_cost(&self, _tool: Tool) -> u32 {
        3
    }

    /// A loop's first step launches the kernels every later one does.
    fn first_steps(&self, _tool: Tool) -> Option<u32> {
        Some(1)
    }

    fn command(&self, ctx: &StageContext<'_>) -> StageCommand {
        let mut command = StageCommand::program(ctx);
        // Found or built before the stages (`doctor::global_race_tool`).
        let library = match &ctx.tools.global_race {
            Some(Ok(library)) => library,
            Some(Err(why)) => {
                command.cannot_start = Some(why.clone());
                return command;
            }
            None => {
                command.cannot_start = Some("the global-race tool was not looked for".into());
                return command;
            }
        };
        let preload = match std::env::var("LD_PRELOAD") {
            Ok(user) if !user.is_empty() => format!("{}:{user}", library.display()),
            _ => library.display().to_string(),
        };
        command.env.extend([
            ("LD_PRELOAD".to_string(), preload),
            (
                "CUDAWATCH_GLOBAL_RACE_OUT".to_string(),
                ctx.stage_dir.display().to_string(),
            ),
        ]);
        command
    }

    /// Blocked, as the sanitizers are, by an out-of-memory error or a
    /// collective's timeout the run would meet again under the tool.
    fn after_plain(&self, command: &mut StageCommand, plain: &StageRecord) {
        super::plain::blocked_by_plain_failure(command, plain);
    }

    /// Each module's SASS with line information, once the program ended.
    fn follow_ups(
        &self,
        stage: &FollowUpContext<'_>,
        started: &[String],
        _finished: &[String],
    ) -> Vec<FollowUp> {
        let Some(nvdisasm) = super::lookup::nvdisasm() else {
            return Vec::new();
        };
        modules(stage.stage_dir)
            .into_iter()
            .filter(|(n, _)| !started.contains(&sass_name(*n)))
            .map(|(n, cubin)| FollowUp {
                name: sass_name(n),
                argv: vec![
                    nvdisasm.clone().into_os_string(),
                    OsString::from("-g"),
                    OsString::from("-c"),
                    cubin.into_os_string(),
                ],
                env: Vec::new(),
                env_remove: Vec::new(),
                stdout: stage.stage_dir.join("modules").join(sass_name(n)),
                stderr: stage.stage_dir.join("modules").join(format!("{n}.err")),
                timeout: None,
            })
            .collect()
    }

    fn read(
        &self,
        builder: &mut ReportBuilder,
        files: &StageFiles,
        record: &StageRecord,
    ) -> StageJudged {
        let text = String::from_utf8_lossy(&files.read(LINES)).into_owned();
        let output = cudawatch_parsers::global_race::parse(&text);
        let (tables, unplaced) = line_tables(&output, |module| {
            vec![files.path(&format!("modules/{}", sass_name(module)))]
        });
        let races = builder.global_race(&files.rel(LINES), &output, &tables);
        let is_own = |launch: &Launch| runs_own_kernel(launch, &tables);
        let (outcome, mut reason) = rule(record, &output, races, &is_own);
        if unplaced > 0 && races > 0 {
            reason.push_str(&format!(
                "; {} without its SASS (nvdisasm not found or failed): races there are named by \
                 offset, not line",
                plural(unplaced, "module")
            ));
        }
        StageJudged::of_program((outcome, reason), record)
    }
}

/// The line table of each module the launches name, from the first of
/// `sass_of(module)`'s files that can be read (the stage's
/// `modules/N.sass`; `parse` also takes a capture's `STEM.N.sass`), and
/// how many modules had none.
pub fn line_tables(
    output: &Output,
    sass_of: impl Fn(u32) -> Vec<PathBuf>,
) -> (HashMap<u32, LineTable>, u64) {
    let mut tables = HashMap::new();
    let mut unplaced = 0;
    for module in output.launches.iter().filter_map(|l| l.module) {
        if tables.contains_key(&module) {
            continue;
        }
        match sass_of(module)
            .iter()
            .find_map(|p| crate::safe_files::read(p).ok())
        {
            Some(bytes) => {
                let sass = String::from_utf8_lossy(&bytes);
                tables.insert(module, LineTable::from_sass(&sass));
            }
            None => unplaced += 1,
        }
    }
    (tables, unplaced)
}

/// Whether a launch ran a kernel of the program's own: not a framework's
/// or library's by its name, or with line information naming a file no
/// framework or library owns (a user's `tiled_gemm` compiled with
/// `-lineinfo` is named like cuBLAS's; Inductor's kernels name its
/// generated files), as `judge::owner` places a race's site.
fn runs_own_kernel(launch: &Launch, tables: &HashMap<u32, LineTable>) -> bool {
    use crate::judge::owner::{of_file, of_kernel};
    of_kernel(&function_name(&launch.kernel)) == Owner::User
        || launch
            .module
            .and_then(|m| tables.get(&m))
            .is_some_and(|t| t.files(&launch.kernel).any(|f| of_file(f) == Owner::User))
}

/// Each module the tool kept: its index and cubin.
fn modules(stage_dir: &Path) -> Vec<(u32, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(stage_dir.join("modules")) else {
        return Vec::new();
    };
    let mut found: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_suffix(".cubin")?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    found.sort();
    found
}

/// The follow-up (and file) of module `n`'s SASS.
fn sass_name(n: u32) -> String {
    format!("{n}.sass")
}

/// What the tool cannot see, said with its clean verdict.
const BLIND_SPOTS: &str = "launches inside CUDA graphs are not checked, and a race among many \
     threads is found through the pair that met last";

/// The stage's outcome from its `races` sites and which launches ran a
/// kernel of the program's own (`is_own`): races are findings; clean needs
/// the tool's own line, the program's own launches checked whole, no error
/// of its own, a program that ran to its end and a kernel of the
/// program's own among them. A library's or framework's launch checked in
/// part is said, not inconclusive: a race there would not gate (cuDNN's
/// and ATen's kernels of more than the tool's 1024 block clocks, every
/// ResNet-18 and ViT-tiny step on an H200).
pub fn rule(
    record: &StageRecord,
    output: &Output,
    races: usize,
    is_own: &dyn Fn(&Launch) -> bool,
) -> (Outcome, String) {
    if races > 0 {
        return (
            Outcome::Findings,
            format!(
                "{} in global memory, in {} checked",
                plural(races as u64, "race site"),
                plural(output.launches.len() as u64, "launch")
            ),
        );
    }
    if let Some(problem) = process_problem(record, "the program under the global-race tool", "") {
        return problem;
    }
    if let Some(unusable) = unusable(output) {
        return unusable;
    }
    let partial = |own: bool| {
        output
            .launches
            .iter()
            .filter(|l| !l.whole() && is_own(l) == own)
            .count() as u64
    };
    if partial(true) > 0 {
        return (
            Outcome::Inconclusive,
            format!(
                "{} of the program's own kernels, of {} in all, checked in part (more threads, \
                 words or blocks than the tool's tables hold): no race seen in what was checked",
                plural(partial(true), "launch"),
                output.launches.len()
            ),
        );
    }
    // Said with a clean or not-applicable verdict.
    let libraries_in_part = match partial(false) {
        0 => String::new(),
        n => format!(
            "; {} of libraries' or frameworks' kernels checked in part (more threads, words or \
             blocks than the tool's tables hold; their races do not gate)",
            plural(n, "launch")
        ),
    };
    if record.end != ProcessEnd::Exited(0) {
        return (
            Outcome::Inconclusive,
            format!(
                "the program {} under the global-race tool with no race seen: checked only up \
                 to there",
                describe_end(record.end)
            ),
        );
    }
    // A program of PyTorch's, cuDNN's and cuBLAS's kernels only: a race
    // there is the library's and never gates, so there was nothing of the
    // user's to check (said, not called clean).
    if !output.launches.iter().any(is_own) {
        return (
            Outcome::Skipped,
            format!(
                "not applicable: none of the {} checked ran a kernel of the program's own (all a \
                 framework's or library's, whose races do not gate); no race in global \
                 memory{libraries_in_part}",
                plural(output.launches.len() as u64, "launch")
            ),
        );
    }
    (
        Outcome::Clean,
        format!(
            "{} checked, no race in global memory ({BLIND_SPOTS}){libraries_in_part}",
            plural(output.launches.len() as u64, "launch")
        ),
    )
}

/// Why the tool's lines cannot vouch for anything, if they cannot: it
/// never loaded, it said it could not check, it saw no launch, or a line
/// of it could not be read.
fn unusable(output: &Output) -> Option<(Outcome, String)> {
    if output.processes.is_empty() && output.launches.is_empty() {
        return Some((
            Outcome::Inconclusive,
            format!(
                "the global-race tool never loaded (no line of its own in {LINES}): a static or \
                 setuid program ignores LD_PRELOAD, or the library could not load (the stage's \
                 stderr says why); nothing was checked"
            ),
        ));
    }
    if let Some(error) = output.errors.first() {
        return Some((
            Outcome::Inconclusive,
            format!("the global-race tool could not check: {error}"),
        ));
    }
    if output.launches.is_empty() {
        return Some((
            Outcome::Inconclusive,
            "the global-race tool saw no launch: nothing was checked".into(),
        ));
    }
    if output.unreadable > 0 {
        return Some((
            Outcome::Inconclusive,
            format!(
                "{} in {LINES} could not be read (cut short?): what they held is unknown",
                plural(output.unreadable as u64, "line")
            ),
        ));
    }
    None
}
