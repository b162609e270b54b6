//! `cudawatch run -- PROGRAM...`: settings → plan → the supervisor's stage
//! loop, listening to its events: progress lines, each stage's
//! `stage.json`, and `report.json` rewritten after every stage so that an
//! interrupted or crashed run still leaves one. Then judging and rendering.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::cli::args::RunArgs;
use crate::cli::progress::Progress;
use crate::cli::settings;
use crate::errors::ExpectedError;
use crate::plan;
use crate::render::{self, style::Styles};
use crate::rundir::{self, Assembler, RunRecord};
use crate::supervisor::{self, StageEvent};

/// Runs `cudawatch run`; returns the exit code.
// Over 100 lines on purpose: the command's steps in the order they happen
// (settings, plan, doctor, the supervisor, the report, the exit), each a call
// into its part; split, they would only pass their shared locals around.
pub fn run(args: &RunArgs, styles: Styles) -> Result<i32, ExpectedError> {
    if args.program.is_empty() {
        return Err(ExpectedError::NoProgram);
    }
    // A stage named twice would share one folder: the second run would
    // overwrite the first's artifacts and both rows show one result.
    if let Some(twice) = args
        .stages
        .iter()
        .enumerate()
        .find_map(|(i, s)| args.stages[..i].contains(s).then_some(s))
    {
        return Err(ExpectedError::Usage(format!(
            "--stages names {} twice; name each stage once",
            twice.name()
        )));
    }
    // A gate on a stage the run will not have would pass in silence.
    if args.output.gate.gate_oom_recovery
        && !args.stages.contains(&cudawatch_model::Tool::OomRecovery)
    {
        return Err(ExpectedError::Usage(
            "--gate-oom-recovery gates the oom-recovery stage, which this run's stages leave out: \
             add it (--stages plain,memory,oom-recovery,...) or leave the flag out"
                .into(),
        ));
    }
    plan::program::check(&args.program, Path::new("."))?;
    let mut run_settings = settings::run_settings(args);
    // compute-sanitizer would refuse it in every stage, an hour in.
    if let Some(path) = &run_settings.sanitizer_suppressions
        && !path.is_file()
    {
        return Err(ExpectedError::Input {
            path: path.display().to_string(),
            message: "no such file (--sanitizer-suppressions)".into(),
        });
    }
    let policy = settings::policy(&args.output)?;
    let mut output = settings::output(&args.output)?;
    // A report that cannot be written must fail now, not after an hour of
    // sanitizers.
    render::check_targets(&output)?;
    let mut run = RunRecord {
        cudawatch_version: env!("CARGO_PKG_VERSION").to_string(),
        target: run_settings
            .program
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        stages: run_settings.stages.clone(),
        interrupted: false,
        schedule: None,
        source_root: settings::source_root(&args.output)
            .canonicalize()
            .ok()
            .map(|root| root.display().to_string()),
        own_kernels: Vec::new(),
        own_kernel_search_cut_short: false,
    };
    let run_dir = match &run_settings.out_dir {
        Some(dir) => {
            rundir::claim(dir, &run)?;
            dir.clone()
        }
        None => claim_default(&run_settings.program, &run)?,
    };
    // The environment as doctor sees it (quick: no probes of its own, the
    // last ones from its cache): kept beside the run, embedded in its
    // report, and its problems said before any stage.
    let (environment, sanitizer_version) = crate::doctor::for_run(&run_settings.tools);
    // What is said before the stages, which the report then only names.
    let mut said: Vec<String> = Vec::new();
    run_settings.tools.sanitizer_version = sanitizer_version;
    if let Some((path, version)) = &mut run_settings.tools.racecheck_sanitizer {
        *version = crate::doctor::tool_version(path);
    }
    if args.compute_sanitizer.is_none() {
        pypi_sanitizer(&mut run_settings);
    }
    global_race_tool(&mut run_settings);
    let root = settings::source_root(&args.output);
    own_library_named_kernels(&mut run_settings, &root, &mut run, &run_dir)?;
    rundir::write_json(&run_dir.join("environment.json"), &environment)?;
    for check in environment
        .checks
        .iter()
        .filter(|c| c.status == cudawatch_model::EnvStatus::Problem && !c.id.starts_with("tool_"))
    {
        said.push(check.id.clone());
        render::stderr::warning(&format!(
            "{}: {}{}",
            check.title,
            check.detail,
            check
                .fix
                .as_deref()
                .map(|f| format!(" (fix: {f})"))
                .unwrap_or_default()
        ));
    }
    let plan = plan::plan(&run_settings, &run_dir);
    // Said up front, before an hour of stages that cannot check; the
    // remedy is said once, in the report's note on those stages.
    for (name, _) in &run_settings.tools.missing {
        let affected: Vec<&str> = plan
            .stages
            .iter()
            .filter(|s| {
                s.command
                    .argv
                    .first()
                    .is_some_and(|a| a == name.as_os_str())
            })
            .map(|s| s.tool.name())
            .collect();
        if !affected.is_empty() {
            render::stderr::warning(&format!(
                "{} not found: {} will be inconclusive (the report says how to fix it)",
                name.to_string_lossy(),
                affected.join(", ")
            ));
            // doctor's check of that tool (`tool_compute_sanitizer`).
            said.push(format!("tool_{}", name.to_string_lossy().replace('-', "_")));
        }
    }
    output.environment_said = said;
    // The Python hook goes into the run directory (never the user's tree),
    // for the stages that put it on PYTHONPATH.
    if plan
        .stages
        .iter()
        .any(|s| crate::tools::hook::uses_hook(&s.command) && s.command.not_applicable.is_none())
    {
        let dir = crate::tools::hook::dir(&run_dir);
        std::fs::create_dir_all(&dir)
            .and_then(|_| {
                crate::safe_files::write_atomic(
                    &dir.join("sitecustomize.py"),
                    crate::tools::hook::SITECUSTOMIZE.as_bytes(),
                )
            })
            .map_err(|e| ExpectedError::RunDir {
                path: dir.display().to_string(),
                message: e.to_string(),
            })?;
    }
    let mut assembler = Assembler::new(&run_dir, run.clone(), &settings::source_root(&args.output));
    if run_settings.stream && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        render::stderr::note(
            "--stream passes the program's and the tools' output to this terminal raw, \
             escape sequences included; the report below is neutralised",
        );
    }
    let mut progress = Progress::new(run_settings.stream);
    supervisor::run_plan(&plan, |event| match event {
        StageEvent::Scheduled { at_once, why } => {
            progress.note(why);
            run.schedule = Some(format!("{at_once} at once: {why}"));
            rundir::write_json(&run_dir.join("run.json"), &run)
        }
        StageEvent::Started {
            index,
            total,
            tool,
            command,
            quiet,
        } => {
            if !quiet {
                progress.started(index, total, tool, command);
            }
            Ok(())
        }
        StageEvent::Finished {
            index,
            total,
            record,
        } => {
            let stage_dir = run_dir.join(record.tool.name());
            rundir::write_json(&stage_dir.join("stage.json"), record)?;
            let outcome = assembler.add_record(record).outcome;
            // Rewritten after every stage: a later stage may hang or the
            // user may stop the run, and what finished must not be lost.
            rundir::write_json(&run_dir.join("report.json"), &assembler.report())?;
            // A stage nothing called for (the core dump of a run without a
            // device exception) says so in one line, rather than leave a
            // gap in the numbers the user reads.
            match record
                .not_applicable
                .as_deref()
                .filter(|r| cudawatch_model::is_not_needed(r))
            {
                Some(reason) => progress.noted(index, total, record.tool, reason),
                None => progress.finished(index, total, record.tool, outcome, record.seconds),
            }
            Ok(())
        }
        StageEvent::Noted {
            index,
            total,
            tool,
            text,
        } => {
            progress.noted(index, total, tool, text);
            Ok(())
        }
        StageEvent::Interrupted { after } => {
            render::stderr::line(&match after {
                Some(after) => format!(
                    "interrupted: stopping after {}; the report covers what finished",
                    after.name()
                ),
                None => "interrupted before the first stage: nothing was run".to_string(),
            });
            run.interrupted = true;
            rundir::write_json(&run_dir.join("run.json"), &run)?;
            assembler.set_interrupted();
            rundir::write_json(&run_dir.join("report.json"), &assembler.report())
        }
    })?;
    // Judging and rendering a large run takes a while: a second Ctrl-C
    // during it ends cudawatch at once.
    let code = {
        let _busy = supervisor::signals::Blocking::enter();
        super::judge_and_render(assembler.report(), &policy, &output, styles, None)
    };
    render::stderr::line(&format!(
        "raw artifacts and report.json: {}",
        render::untrusted::clean(&run_dir.display().to_string())
    ));
    Ok(code)
}

/// `cudawatch-runs/20261122-172000-train.py`, or `...-2`, `-3` when runs
/// started in the same second: each run gets a directory of its own.
fn claim_default(program: &[OsString], run: &RunRecord) -> Result<PathBuf, ExpectedError> {
    let base = default_run_dir(program);
    keep_out_of_git(base.parent());
    let mut last = None;
    for n in 1..=100 {
        let dir = if n == 1 {
            base.clone()
        } else {
            PathBuf::from(format!("{}-{n}", base.display()))
        };
        match rundir::claim(&dir, run) {
            Ok(()) => return Ok(dir),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("tried at least once"))
}

/// A `.gitignore` of `*` in the default runs folder when cudawatch makes
/// it: runs (gigabytes of raw artifacts) never show up in the user's
/// `git status`. An existing file is left as the user made it.
fn keep_out_of_git(runs: Option<&Path>) {
    let Some(runs) = runs else { return };
    if std::fs::create_dir_all(runs).is_err() {
        return;
    }
    // create_new: never through a planted symlink, never over the user's.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(runs.join(".gitignore"))
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(b"# cudawatch's run directories: raw artifacts, not sources.\n*\n")
        });
}

fn default_run_dir(program: &[OsString]) -> PathBuf {
    let stamp = jiff::Timestamp::now().strftime("%Y%m%d-%H%M%S").to_string();
    let name = program
        .iter()
        .map(|a| {
            Path::new(a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .find(|n| n.ends_with(".py"))
        .or_else(|| {
            program
                .first()
                .and_then(|p| Path::new(p).file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "program".into());
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    PathBuf::from("cudawatch-runs").join(format!("{stamp}-{safe}"))
}

/// The program's own kernels whose names a library's or PyTorch's carry
/// stay in racecheck's and synccheck's checks and in ncu's profile: found
/// in its binaries now (a native program's executable, the binaries below
/// the project's root), and said once, before the stages. Not where those
/// stages check every kernel anyway (`--gate-scope all`, the user's own
/// kernel filters). Kept in `run.json` too, for the judge of a report made
/// again from the folder.
fn own_library_named_kernels(
    settings: &mut plan::RunSettings,
    root: &Path,
    run: &mut RunRecord,
    run_dir: &Path,
) -> Result<(), ExpectedError> {
    let filtering = filtering_stages(settings);
    if filtering.is_empty() {
        return Ok(());
    }
    let words = crate::plan::launcher::unwrapped(&settings.program);
    let python = crate::plan::is_python(&settings.program);
    let executable = (!python)
        .then(|| words.first())
        .flatten()
        .and_then(|first| crate::executables::resolve(Path::new(first)));
    // PyTorch builds `load_inline` extensions there, not in the project.
    let built: Vec<std::path::PathBuf> = std::env::var_os("TORCH_EXTENSIONS_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/torch_extensions")))
        .filter(|_| python)
        .into_iter()
        .collect();
    // Not below `/` or the home folder, whose snippets are refused too.
    let root = crate::rundir::snippets::refused_root(root)
        .is_none()
        .then_some(root);
    let found = crate::tools::sanitizer::library_named(executable.as_deref(), root, &built);
    if found.cut_short {
        render::stderr::note(&crate::tools::sanitizer::own_kernel_search_cut_short());
        run.own_kernel_search_cut_short = true;
    }
    let Some(first) = found.names.first() else {
        return Ok(());
    };
    let files: Vec<String> = found
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    // Names are ASCII (`own_kernels` reads `[A-Za-z0-9_$]` only); CUTLASS's
    // run to thousands of characters.
    let shown = match first.get(..80) {
        Some(start) if first.len() > 80 => format!("{start}..."),
        _ => first.clone(),
    };
    render::stderr::note(&format!(
        "{} keep checking kernels named like a library's or PyTorch's: {} of the program's \
         own carry such names (first {shown}, in {})",
        crate::words::and_list(&filtering),
        found.names.len(),
        files.join(", ")
    ));
    run.own_kernels = found.names.clone();
    settings.own_library_named = found.names;
    rundir::write_json(&run_dir.join("run.json"), run)
}

/// The stages of this run that leave library or PyTorch's kernels out:
/// racecheck and synccheck unless told to check every kernel, ncu unless
/// told to profile PyTorch's or given a kernel filter.
fn filtering_stages(settings: &plan::RunSettings) -> Vec<&'static str> {
    let sanitizers = crate::tools::sanitizer::LIBRARY_FILTERED
        .iter()
        .filter(|_| settings.sanitizer_launches.may_leave_out_libraries());
    let ncu = [cudawatch_model::Tool::Ncu]
        .into_iter()
        .filter(|_| settings.ncu.leaves_out_vendors());
    sanitizers
        .copied()
        .chain(ncu)
        .filter(|tool| settings.stages.contains(tool))
        .map(|tool| tool.name())
        .collect()
}

/// The global-race stage's tool, found or built now (seconds, once per
/// machine and toolkit) so that its stage starts like any other; why
/// not, for the stage to say.
fn global_race_tool(settings: &mut plan::RunSettings) {
    if !settings.stages.contains(&cudawatch_model::Tool::GlobalRace) {
        return;
    }
    let python = crate::plan::interpreter(&settings.program);
    let found = crate::doctor::global_race_tool::find_or_build(
        &settings.tools,
        Some(&python),
        render::stderr::note,
    );
    settings.tools.global_race = Some(found);
}

/// racecheck and synccheck under the compute-sanitizer the program's
/// Python has from PyPI, when it leaves library kernels out and the
/// toolkit's does not (`doctor::pypi_sanitizer`); said before the stages.
/// A compute-sanitizer the user named is kept: `--compute-sanitizer` for
/// every stage (the caller's), `--racecheck-sanitizer` for racecheck.
fn pypi_sanitizer(settings: &mut plan::RunSettings) {
    let tools: Vec<cudawatch_model::Tool> = crate::tools::sanitizer::LIBRARY_FILTERED
        .into_iter()
        .filter(|tool| settings.stages.contains(tool))
        .filter(|tool| {
            *tool != cudawatch_model::Tool::Racecheck
                || settings.tools.racecheck_sanitizer.is_none()
        })
        .collect();
    let stages: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
    if stages.is_empty() {
        return;
    }
    let python = crate::plan::interpreter(&settings.program);
    let toolkit = settings.tools.sanitizer_version.as_deref();
    let Some((path, version)) = crate::doctor::pypi_sanitizer::for_library_filter(&python, toolkit)
    else {
        return;
    };
    let (run, them) = match stages.as_slice() {
        [one] => (format!("{one} runs"), "it"),
        _ => (format!("{} run", crate::words::and_list(&stages)), "them"),
    };
    // initcheck leaves the libraries' kernels out, never PyTorch's.
    let whole: Vec<&str> = tools
        .iter()
        .filter(|tool| **tool != cudawatch_model::Tool::Initcheck)
        .map(|tool| tool.name())
        .collect();
    let pytorchs = if whole.is_empty() {
        String::new()
    } else if whole.len() == stages.len() {
        " (and PyTorch's)".to_string()
    } else {
        format!(" (and PyTorch's from {})", crate::words::and_list(&whole))
    };
    render::stderr::note(&format!(
        "{run} under compute-sanitizer {version} from {} (PyPI's nvidia-cuda-sanitizer-api), \
         which leaves library kernels{pytorchs} out of {them}; --racecheck-sanitizer names \
         another for racecheck, --compute-sanitizer one for every stage",
        path.display()
    ));
    settings.tools.pypi_sanitizer = Some((path, version));
}
