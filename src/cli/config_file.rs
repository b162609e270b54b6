//! `cudawatch.toml`: settings found upward from the working directory.
//!
//! The file's values become clap's *defaults*, so clap itself applies the
//! precedence command line > environment (`CUDAWATCH_*`) > file > built-in
//! default, and the same value parsers check a value wherever it came from.
//! A setting's key is its long flag (`fail-on`, `max-wasted-sectors`,
//! `report`); every flag of `cudawatch run` but the program can be set.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command, CommandFactory};

use crate::errors::ExpectedError;
use crate::render::untrusted;

/// The file name looked for in the working directory and its parents.
pub const FILE_NAME: &str = "cudawatch.toml";

/// Settings paths in the file are relative to the file's directory; these
/// are the keys whose values are paths (`report` only after its `=`).
const PATH_KEYS: &[&str] = &[
    "out-dir",
    "baseline",
    "suppressions",
    "sanitizer-suppressions",
    "source-root",
];
/// Executables: resolved against the file only when written as a path
/// (with a `/`); a bare name is looked up on PATH as usual.
const PROGRAM_KEYS: &[&str] = &["compute-sanitizer", "racecheck-sanitizer", "ncu"];

/// A loaded `cudawatch.toml`.
#[derive(Debug, Default)]
pub struct ConfigFile {
    /// Where it was found.
    pub path: PathBuf,
    /// Each setting it makes: the clap argument id, its values (paths
    /// already resolved) and its line.
    pub settings: Vec<FileSetting>,
}

/// One `key = value` of the file.
#[derive(Debug)]
pub struct FileSetting {
    /// The key as written (the long flag).
    key: String,
    id: String,
    values: Vec<String>,
    line: usize,
}

impl ConfigFile {
    /// An error about a flag's value (`--baseline x.json: no such file`)
    /// that came from this file names the file, line and key instead
    /// (`cudawatch.toml:3: baseline = "x.json": no such file`): nobody
    /// typed the flag.
    pub fn attribute(&self, error: ExpectedError) -> ExpectedError {
        let ExpectedError::Input { path, message } = &error else {
            return error;
        };
        let Some((flag, value)) = path.strip_prefix("--").and_then(|p| p.split_once(' ')) else {
            return error;
        };
        match self
            .settings
            .iter()
            .find(|s| s.key == flag && s.values.iter().any(|v| v == value))
        {
            Some(setting) => ExpectedError::Input {
                path: format!(
                    "{}:{}: {} = {value:?}",
                    self.path.display(),
                    setting.line,
                    setting.key
                ),
                message: message.clone(),
            },
            None => error,
        }
    }
}

/// Where a resolved setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A flag on the command line.
    CommandLine,
    /// An environment variable (its name).
    Environment(String),
    /// The config file, at a line.
    File(PathBuf, usize),
    /// The config file's folder, taken as the source root when the file
    /// names none (`source-root`).
    FileFolder(PathBuf),
    /// cudawatch's built-in default (or unset).
    Default,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::CommandLine => f.write_str("command line"),
            Origin::Environment(name) => write!(f, "environment {name}"),
            Origin::File(path, line) => write!(f, "{}:{line}", path.display()),
            Origin::FileFolder(path) => write!(f, "the folder of {}", path.display()),
            Origin::Default => f.write_str("default"),
        }
    }
}

/// The whole command line, with the file's settings applied: the clap
/// matches, the derived arguments and the file (if one was found).
pub struct Resolved {
    pub matches: ArgMatches,
    pub args: crate::cli::args::Args,
    pub file: Option<ConfigFile>,
}

/// Parses the command line, finding and applying `cudawatch.toml` first.
/// clap's own errors (and `--help`) exit here as clap does.
pub fn parse_command_line(raw: Vec<OsString>) -> Result<Resolved, ExpectedError> {
    // A first pass only to learn `--config`; the second pass, with the
    // file's defaults, is the one that counts (and prints help or errors).
    // (A first pass that fails, e.g. on `--help`, still honours the variable.)
    boolean_variables_read(&command())?;
    let first = command().try_get_matches_from(&raw);
    let explicit = match &first {
        Ok(m) => config_flag(m),
        Err(_) => std::env::var_os("CUDAWATCH_CONFIG").map(PathBuf::from),
    };
    // `explain`, `doctor`, `man`, `completions` take none of the file's
    // settings but `--color`: a broken file found above the working
    // directory must not stop them (it is said, and passed over).
    let needs_settings = match &first {
        Ok(m) => m.subcommand_name().is_some_and(uses_settings),
        Err(_) => raw
            .iter()
            .skip(1)
            .map(|w| w.to_string_lossy())
            .find(|w| !w.starts_with('-'))
            .is_none_or(|w| uses_settings(&w)),
    };
    let load = |path: &Path| match load(path, &command()) {
        Err(error) if !needs_settings => {
            crate::render::stderr::warning(&format!("{error}; going on without it"));
            Ok(None)
        }
        other => other.map(Some),
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let chosen = explicit.is_some();
    let file = match locate(explicit, &cwd) {
        Some(path) if !chosen => match distrust(&path) {
            Some(why) => {
                crate::render::stderr::warning(&format!(
                    "not using {}: {why}; pass --config {} to use it",
                    path.display(),
                    path.display(),
                ));
                None
            }
            None => load(&path)?,
        },
        Some(path) => load(&path)?,
        None => None,
    };
    let mut cmd = command();
    if let Some(file) = &file {
        cmd = apply(cmd, file);
    }
    let matches = match cmd.try_get_matches_from(&raw) {
        Ok(matches) => matches,
        Err(error) => with_tip(error, &raw).exit(),
    };
    if let Some(file) = &file
        && matches!(
            matches.subcommand_name(),
            Some("run" | "report" | "parse" | "sweep" | "merge" | "diff")
        )
    {
        announce(file);
    }
    let args = <crate::cli::args::Args as clap::FromArgMatches>::from_arg_matches(&matches)
        .unwrap_or_else(|e| e.exit());
    Ok(Resolved {
        matches,
        args,
        file,
    })
}

/// Every on/off setting's `CUDAWATCH_*` variable that is set reads as a
/// boolean (`1`, `0`, `true`, `no`, `on`, ... as clap's boolish parser
/// takes them); one that does not is refused naming the variable, where
/// clap's own error named a flag the user never typed
/// (`invalid value 'maybe' for '--stream'`).
fn boolean_variables_read(cmd: &Command) -> Result<(), ExpectedError> {
    const BOOLISH: [&str; 12] = [
        "y", "yes", "t", "true", "on", "1", "n", "no", "f", "false", "off", "0",
    ];
    let mut commands = vec![cmd];
    while let Some(cmd) = commands.pop() {
        commands.extend(cmd.get_subcommands());
        for arg in cmd.get_arguments() {
            let (ArgAction::SetTrue, Some(name)) = (arg.get_action(), arg.get_env()) else {
                continue;
            };
            let Some(value) = std::env::var_os(name) else {
                continue;
            };
            let value = value.to_string_lossy();
            if !BOOLISH.contains(&value.trim().to_ascii_lowercase().as_str()) {
                return Err(ExpectedError::Usage(format!(
                    "{}={}: expects 1 or 0 (or true, false, yes, no, on, off)",
                    name.to_string_lossy(),
                    crate::render::untrusted::clean(&value)
                )));
            }
        }
    }
    Ok(())
}

/// The clap command, with `cudawatch config` taking every setting flag of
/// `run` so that it can show their precedence.
pub fn command() -> Command {
    let settings: Vec<Arg> = setting_args(&crate::cli::args::Args::command())
        .into_iter()
        .filter(|a| !a.is_global_set())
        .cloned()
        .collect();
    crate::cli::args::Args::command().mut_subcommand("config", |c| c.args(settings))
}

fn config_flag(matches: &ArgMatches) -> Option<PathBuf> {
    let mut m = Some(matches);
    while let Some(current) = m {
        if let Ok(Some(path)) = current.try_get_one::<PathBuf>("config") {
            return Some(path.clone());
        }
        m = current.subcommand().map(|(_, sub)| sub);
    }
    None
}

/// The file to use: `--config`/`CUDAWATCH_CONFIG` if given, else the first
/// `cudawatch.toml` in `cwd` or above it.
pub fn locate(explicit: Option<PathBuf>, cwd: &Path) -> Option<PathBuf> {
    if explicit.is_some() {
        return explicit;
    }
    // Upward, but not out of the project: the search stops at the first
    // directory with a `.git` or at the home directory, so a file in `/tmp`
    // or `/` of a shared machine is never picked up from inside a project.
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for dir in cwd.ancestors() {
        let candidate = dir.join(FILE_NAME);
        if candidate.is_file() {
            return Some(candidate);
        }
        if dir.join(".git").exists() || home.as_deref() == Some(dir) {
            return None;
        }
    }
    None
}

/// Why a file found by the upward search must not be obeyed, if it must
/// not (git's `safe.directory` is the precedent): someone else's file, or
/// one others can change, could lower the gate or choose where reports are
/// written. `--config` (or `CUDAWATCH_CONFIG`) names a file on purpose and
/// is not asked this.
fn distrust(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // A link found on the way up would be obeyed, its relative paths
    // resolved beside the link, wherever it points.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Some("it is a symbolic link".into());
    }
    // A folder others can write (and replace files in) lends its files no
    // trust, as git's safe.directory has it; a sticky one (/tmp) keeps
    // each file its owner's.
    if let Some(folder) = path.parent().and_then(|p| std::fs::metadata(p).ok())
        && folder.mode() & 0o002 != 0
        && folder.mode() & 0o1000 == 0
    {
        return Some("others can write to its folder".into());
    }
    let meta = std::fs::metadata(path).ok()?;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Some(format!("it belongs to uid {}, not to you", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Some("others can write to it".into());
    }
    None
}

/// Settings that lower the gate, narrow what is checked (stages, kernel
/// filters, launch counts, the leak check, steps), widen what is read or
/// choose where files are written: a file that makes them says each, with
/// its value, on the terminal.
const WEIGHTY_KEYS: &[&str] = &[
    "stages",
    "sanitizer-kernel",
    "sanitizer-launch-count",
    "sanitizer-launch-skip",
    "ncu-kernel",
    "ncu-launch-cap",
    "leak-check",
    "steps",
    "keep-caching-allocator",
    "racecheck-warnings",
    "fail-on",
    "gate-scope",
    "source-root",
    "report",
    "out-dir",
    "baseline",
    "suppressions",
    "sanitizer-suppressions",
    "compute-sanitizer",
    "racecheck-sanitizer",
    "ncu",
    "max-wasted-sectors",
    "max-line-wasted-sectors",
    "max-excess-sectors-per-request",
    "min-memory-headroom",
];

/// `settings from ./cudawatch.toml: fail-on = never, report = markdown=x.md`.
fn announce(file: &ConfigFile) {
    let weighty: Vec<String> = file
        .settings
        .iter()
        .filter(|s| s.line > 0 && WEIGHTY_KEYS.contains(&s.key.as_str()))
        .map(|s| format!("{} = {}", s.key, s.values.join(",")))
        .collect();
    let what = if weighty.is_empty() {
        String::new()
    } else {
        format!(": {}", weighty.join(", "))
    };
    crate::render::stderr::line(&format!(
        "settings from {}{}",
        untrusted::clean(&file.path.display().to_string()),
        untrusted::clean(&what)
    ));
}

/// Whether a subcommand takes settings from `cudawatch.toml`.
fn uses_settings(name: &str) -> bool {
    matches!(
        name,
        "run" | "report" | "parse" | "sweep" | "merge" | "diff" | "config"
    )
}

/// clap's error with a tip for the two mistakes whose clap tip misleads: a
/// program given without `--` (`cudawatch run python train.py`), and a
/// negative value read as a flag (`--timeout -5`, where clap suggests
/// `-- -5`, which would make `-5` the program).
fn with_tip(mut error: clap::Error, raw: &[OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::UnknownArgument {
        return error;
    }
    let Some(ContextValue::String(bad)) = error.get(ContextKind::InvalidArg).cloned() else {
        return error;
    };
    let words: Vec<String> = raw
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let Some(at) = words.iter().position(|w| *w == bad) else {
        return error;
    };
    let tip = if bad.parse::<f64>().is_ok() && at > 0 && words[at - 1].starts_with("--") {
        format!(
            "`{bad}` was read as a flag, not as the value of {}; values cannot be negative",
            words[at - 1]
        )
    } else if !bad.starts_with('-')
        && let Some(command) = words.iter().skip(1).position(|w| w == "run").map(|i| i + 1)
        && command < at
    {
        let program: Vec<String> = words[at..]
            .iter()
            .map(|w| shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned()))
            .collect();
        format!(
            "the program goes after `--`: cudawatch run {}-- {}",
            words[command + 1..at]
                .iter()
                .map(|w| format!("{w} "))
                .collect::<String>(),
            program.join(" ")
        )
    } else {
        return error;
    };
    error.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
    error
}

/// Every configurable argument: the flags of `run` (but the program) and
/// the global `--color`, in help order.
pub fn setting_args(root: &Command) -> Vec<&Arg> {
    let run = root
        .find_subcommand("run")
        .expect("the run subcommand exists");
    root.get_arguments()
        .filter(|a| a.get_id() == "color")
        .chain(run.get_arguments())
        .filter(|a| a.get_long().is_some() && !matches!(a.get_id().as_str(), "config" | "help"))
        .collect()
}

/// Reads and checks a config file: unknown keys, wrong types and values
/// the flag would refuse are one-line errors naming file, line and key.
pub fn load(path: &Path, root: &Command) -> Result<ConfigFile, ExpectedError> {
    // A settings file is part of the command line: its errors are usage
    // errors (exit 2), like a bad flag.
    let text = std::fs::read_to_string(path)
        .map_err(|e| ExpectedError::Setup(format!("config file {}: {e}", path.display())))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        ExpectedError::Setup(format!(
            "config file {}: {}",
            path.display(),
            crate::errors::toml_one_line(&e)
        ))
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let args = setting_args(root);
    let mut settings = Vec::new();
    for (key, value) in &table {
        let line = line_of(&text, key);
        let fail = |message: String| {
            ExpectedError::Setup(format!(
                "config file {}:{line}: {key}: {message}",
                path.display()
            ))
        };
        let Some(arg) = args.iter().find(|a| a.get_long() == Some(key.as_str())) else {
            let known: Vec<&str> = args.iter().filter_map(|a| a.get_long()).collect();
            let spelled = key.to_ascii_lowercase().replace('_', "-");
            if let Some(close) = known
                .iter()
                .find(|k| **k == spelled)
                .or_else(|| known.iter().find(|k| crate::words::close(k, &spelled)))
            {
                return Err(fail(format!("not a setting; did you mean `{close}`?")));
            }
            return Err(fail(format!(
                "not a setting; settings are {}",
                known.join(", ")
            )));
        };
        let values = values_of(arg, value).map_err(fail)?;
        if let Some(outside) = values.iter().find(|v| writes_outside(key, v, dir)) {
            return Err(fail(format!(
                "{outside:?} writes outside this file's folder ({}): a settings file writes only \
                 below the folder it is in; give such a path on the command line",
                dir.display()
            )));
        }
        let values = values
            .into_iter()
            .map(|v| resolve_path(key, v, dir))
            .collect::<Vec<_>>();
        check_value(arg, &values).map_err(fail)?;
        settings.push(FileSetting {
            key: key.clone(),
            id: arg.get_id().to_string(),
            values,
            line,
        });
    }
    if let Some(implied) = implied_source_root(&settings, &args, dir) {
        settings.push(implied);
    }
    Ok(ConfigFile {
        path: path.to_path_buf(),
        settings,
    })
}

/// The file's folder as the source root, when the file names none: the
/// file sits at the project's root, and reports then name the project's
/// files from there (SARIF's repository-relative paths) wherever in the
/// project cudawatch runs. Not a folder that holds more than a project (a
/// defaults file in the home directory), nor one the working directory is
/// not inside (`--config` naming a shared file): the working directory
/// stays the root then. Line 0 marks it as implied, not written.
fn implied_source_root(settings: &[FileSetting], args: &[&Arg], dir: &Path) -> Option<FileSetting> {
    const KEY: &str = "source-root";
    if settings.iter().any(|s| s.key == KEY) {
        return None;
    }
    let arg = args.iter().find(|a| a.get_long() == Some(KEY))?;
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if crate::rundir::snippets::refused_root(dir).is_some() {
        return None;
    }
    // A file named with --config from elsewhere (a team's shared file) is
    // not the project's root: only a file above the working directory is.
    let here = std::env::current_dir().ok()?.canonicalize().ok()?;
    if !here.starts_with(dir.canonicalize().ok()?) {
        return None;
    }
    Some(FileSetting {
        key: KEY.into(),
        id: arg.get_id().to_string(),
        values: vec![dir.display().to_string()],
        line: 0,
    })
}

/// A TOML value as the strings the flag would take.
fn values_of(arg: &Arg, value: &toml::Value) -> Result<Vec<String>, String> {
    let flag = matches!(arg.get_action(), ArgAction::SetTrue);
    let many = matches!(arg.get_action(), ArgAction::Append);
    let scalar = |v: &toml::Value| -> Result<String, String> {
        match v {
            toml::Value::String(s) if !flag => Ok(s.clone()),
            toml::Value::Integer(i) if !flag => Ok(i.to_string()),
            toml::Value::Float(f) if !flag => Ok(f.to_string()),
            toml::Value::Boolean(b) if flag => Ok(b.to_string()),
            // `= 1` as the variable takes it.
            toml::Value::Integer(i @ (0 | 1)) if flag => Ok((*i == 1).to_string()),
            _ if flag => Err("expects true or false".into()),
            _ => Err(format!(
                "expects a {}",
                if many {
                    "list of strings"
                } else {
                    "string or number"
                }
            )),
        }
    };
    match value {
        toml::Value::Array(items) if many => items.iter().map(scalar).collect(),
        toml::Value::Array(_) => Err("takes one value, not a list".into()),
        // One value for a list setting is a list of one.
        other => Ok(vec![scalar(other)?]),
    }
}

/// Whether a setting that chooses where files are written (`out-dir`,
/// `report = FORMAT=PATH`) names a place outside the settings file's own
/// folder: an absolute path, one through `..`, or one through a symbolic
/// link under the folder (`lnk/notes.txt`, `lnk` pointing out of it). A
/// file unpacked from someone else's bundle must not overwrite
/// `../victim/notes.txt`.
fn writes_outside(key: &str, value: &str, dir: &Path) -> bool {
    let path = match key {
        "out-dir" => value,
        "report" => match value.split_once('=') {
            Some((_, path)) if path != "-" => path,
            _ => return false,
        },
        _ => return false,
    };
    let path = Path::new(path);
    let mut walked = dir.to_path_buf();
    path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        || path.components().any(|c| {
            walked.push(c);
            std::fs::symlink_metadata(&walked).is_ok_and(|m| m.file_type().is_symlink())
        })
}

fn resolve_path(key: &str, value: String, dir: &Path) -> String {
    let join = |p: &str| dir.join(p).display().to_string();
    if PATH_KEYS.contains(&key) && Path::new(&value).is_relative() {
        return join(&value);
    }
    if PROGRAM_KEYS.contains(&key) && value.contains('/') && Path::new(&value).is_relative() {
        return join(&value);
    }
    if key == "report"
        && let Some((format, path)) = value.split_once('=')
        && path != "-"
        && Path::new(path).is_relative()
    {
        return format!("{format}={}", join(path));
    }
    value
}

/// Runs the values through the flag's own parser, so the file refuses what
/// the command line would, with the same possible values.
fn check_value(arg: &Arg, values: &[String]) -> Result<(), String> {
    let long = arg.get_long().expect("settings have long flags");
    let mut argv = vec!["cudawatch.toml".to_string()];
    if matches!(arg.get_action(), ArgAction::SetTrue) {
        if values.iter().any(|v| v == "true") {
            argv.push(format!("--{long}"));
        }
    } else {
        argv.extend(values.iter().map(|v| format!("--{long}={v}")));
    }
    let probe = Command::new("cudawatch.toml")
        .arg(arg.clone().env(None::<&str>).global(false))
        .color(clap::ColorChoice::Never);
    match probe.try_get_matches_from(argv) {
        Ok(_) => Ok(()),
        Err(e) => Err(e
            .to_string()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more"))
            .map(|l| l.trim_start_matches("error: "))
            .collect::<Vec<_>>()
            .join(" ")),
    }
}

fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            let rest = line
                .strip_prefix(key)
                .or_else(|| line.strip_prefix(&format!("\"{key}\"")));
            rest.is_some_and(|r| r.trim_start().starts_with('='))
        })
        .map_or(0, |i| i + 1)
}

/// The command with the file's values as defaults, wherever the argument
/// appears (the global `--color`, and every subcommand sharing the flag).
pub fn apply(mut cmd: Command, file: &ConfigFile) -> Command {
    for setting in &file.settings {
        let values = setting.values.clone();
        let set = |a: Arg| a.default_values(values.clone());
        if cmd
            .get_arguments()
            .any(|a| a.get_id() == setting.id.as_str())
        {
            cmd = cmd.mut_arg(&setting.id, set);
            continue;
        }
        let subcommands: Vec<String> = cmd
            .get_subcommands()
            .filter(|s| s.get_arguments().any(|a| a.get_id() == setting.id.as_str()))
            .map(|s| s.get_name().to_string())
            .collect();
        for name in subcommands {
            cmd = cmd.mut_subcommand(name, |s| s.mut_arg(&setting.id, set));
        }
    }
    cmd
}

/// Where the value of argument `id` in `matches` came from.
pub fn origin(matches: &ArgMatches, arg: &Arg, file: Option<&ConfigFile>) -> Origin {
    let id = arg.get_id().as_str();
    match matches.value_source(id) {
        Some(ValueSource::CommandLine) => Origin::CommandLine,
        Some(ValueSource::EnvVariable) => Origin::Environment(
            arg.get_env()
                .map(|e| e.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ),
        _ => match file.and_then(|f| f.settings.iter().find(|s| s.id == id)) {
            Some(s) if s.line == 0 => Origin::FileFolder(file.expect("found in it").path.clone()),
            Some(s) => Origin::File(file.expect("found in it").path.clone(), s.line),
            None => Origin::Default,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> PathBuf {
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn matches(file: &ConfigFile, argv: &[&str]) -> ArgMatches {
        apply(command(), file)
            .try_get_matches_from(argv)
            .expect("parses")
    }

    fn sub(m: &ArgMatches) -> &ArgMatches {
        m.subcommand().unwrap().1
    }

    #[test]
    fn the_file_is_found_in_a_parent_directory() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        let path = write(dir.path(), "");
        assert_eq!(locate(None, &nested), Some(path));
        let other = PathBuf::from("/elsewhere/x.toml");
        assert_eq!(locate(Some(other.clone()), &nested), Some(other));
    }

    #[test]
    fn command_line_beats_file_and_file_beats_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "fail-on = \"warning\"\nmax-wasted-sectors = 30\nstages = [\"plain\", \"memcheck\"]\n",
        );
        let file = load(&path, &command()).unwrap();
        let m = matches(&file, &["cudawatch", "run", "--fail-on", "note", "--", "x"]);
        let run = sub(&m);
        let fail_on = setting_args(&command())
            .into_iter()
            .find(|a| a.get_id() == "fail_on")
            .unwrap()
            .clone();
        assert_eq!(run.get_raw("fail_on").unwrap().next().unwrap(), "note");
        assert_eq!(origin(run, &fail_on, Some(&file)), Origin::CommandLine);
        assert_eq!(run.get_one::<f64>("max_wasted_sectors"), Some(&30.0));
        let stages: Vec<_> = run.get_raw("stages").unwrap().collect();
        assert_eq!(stages, ["plain", "memcheck"]);
        assert_eq!(run.get_one::<f64>("min_memory_headroom"), Some(&10.0));
    }

    #[test]
    fn relative_paths_are_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "baseline = \"ci/base.json\"\nreport = [\"sarif=out.sarif\", \"json=-\"]\nncu = \"ncu\"\n",
        );
        let file = load(&path, &command()).unwrap();
        let m = matches(&file, &["cudawatch", "parse", "x"]);
        let p = sub(&m);
        assert_eq!(
            p.get_one::<PathBuf>("baseline").unwrap(),
            &dir.path().join("ci/base.json")
        );
        let reports: Vec<_> = p.get_raw("reports").unwrap().collect();
        assert_eq!(
            reports[0].to_str().unwrap(),
            format!("sarif={}", dir.path().join("out.sarif").display())
        );
        assert_eq!(reports[1], "json=-");
        let file_ncu = file.settings.iter().find(|s| s.id == "ncu").unwrap();
        assert_eq!(file_ncu.values, ["ncu"], "a bare program name stays a name");
    }

    #[test]
    fn bad_settings_name_the_line_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        for (text, expected) in [
            (
                "\n\nfail-on = \"warn\"\n",
                ":3: fail-on: invalid value 'warn'",
            ),
            (
                "fail_on = \"error\"\n",
                ":1: fail_on: not a setting; did you mean `fail-on`?",
            ),
            (
                "timout = 5\n",
                ":1: timout: not a setting; did you mean `timeout`?",
            ),
            (
                "colour-scheme = 1\n",
                ":1: colour-scheme: not a setting; settings are",
            ),
            ("stream = \"yes\"\n", "stream: expects true or false"),
            ("grace = [1, 2]\n", "grace: takes one value, not a list"),
            ("timeout = \"soon\"\n", "timeout: invalid value 'soon'"),
            ("fail-on = \n", "cudawatch.toml"),
        ] {
            let path = write(dir.path(), text);
            let error = load(&path, &command()).unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
            assert_eq!(error.lines().count(), 1, "{error}");
        }
    }
}
