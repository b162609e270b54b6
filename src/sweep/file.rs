//! The sweep file: one `[[target]]` table per program, and `[defaults]`
//! for what they share. Every mistake is found before anything runs and
//! said in one line that names the file, the line and the key: a night's
//! sweep must not die at 3 a.m. on a typo in the last target.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cudawatch_model::{Expect, Tool};
use serde::Deserialize;
use toml::Spanned;

use crate::errors::ExpectedError;

/// A target's wall time when neither it nor `[defaults]` sets one.
const DEFAULT_TIMEOUT: f64 = 4.0 * 3600.0;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    defaults: RawDefaults,
    #[serde(default)]
    target: Vec<RawTarget>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawDefaults {
    workdir: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    stages: Option<Spanned<Vec<String>>>,
    timeout: Option<Spanned<f64>>,
    stage_timeout: Option<Spanned<f64>>,
    #[serde(default)]
    run_args: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawTarget {
    name: Spanned<String>,
    command: Spanned<Vec<String>>,
    workdir: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    stages: Option<Spanned<Vec<String>>>,
    timeout: Option<Spanned<f64>>,
    stage_timeout: Option<Spanned<f64>>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    expect: Expect,
    #[serde(default)]
    run_args: Vec<String>,
}

/// A checked sweep file.
#[derive(Debug, Clone)]
pub struct SweepFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its bytes, as read: the sweep id is their hash.
    pub text: String,
    /// Its targets, in order.
    pub targets: Vec<Target>,
}

/// One program of the sweep, with the defaults applied.
#[derive(Debug, Clone)]
pub struct Target {
    /// Unique name; also its directory name under the sweep directory.
    pub name: String,
    /// The argv.
    pub command: Vec<String>,
    /// Where it runs (absolute).
    pub workdir: PathBuf,
    /// Variables set for it.
    pub env: BTreeMap<String, String>,
    /// `--stages`, when set.
    pub stages: Option<Vec<String>>,
    /// Its wall time, all stages together.
    pub timeout: Duration,
    /// `--timeout` of its tool stages, when set.
    pub stage_timeout: Option<f64>,
    /// Tags, for filtering and the report.
    pub tags: Vec<String>,
    /// What it should come out as.
    pub expect: Expect,
    /// More `cudawatch run` flags (e.g. `--leak-check off`).
    pub run_args: Vec<String>,
}

impl SweepFile {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<SweepFile, ExpectedError> {
        let text = std::fs::read_to_string(path).map_err(|e| ExpectedError::Input {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        SweepFile::parse(path, &text)
    }

    /// Checks `text`, read from `path` (relative working directories are
    /// taken from the file's own directory).
    pub fn parse(path: &Path, text: &str) -> Result<SweepFile, ExpectedError> {
        SweepFile::parse_with(path, text, true)
    }

    /// Reads the targets of a sweep that ran elsewhere (for a merge): the
    /// working directories and programs need not exist here.
    pub fn parse_unchecked(path: &Path, text: &str) -> Result<SweepFile, ExpectedError> {
        SweepFile::parse_with(path, text, false)
    }

    // Over 100 lines on purpose: every key of the sweep file checked in one pass,
    // each error naming where.
    fn parse_with(
        path: &Path,
        text: &str,
        on_this_machine: bool,
    ) -> Result<SweepFile, ExpectedError> {
        let at = |span: Option<std::ops::Range<usize>>, message: String| {
            let line = span.map_or(0, |s| line_of(text, s.start));
            let place = if line > 0 {
                format!("{}:{line}", path.display())
            } else {
                path.display().to_string()
            };
            ExpectedError::Setup(format!("{place}: {message}"))
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            // toml names the type, not the key: the key is the line's, and
            // the right form is said beside it.
            let key = e.span().and_then(|s| key_at(text, s.start));
            match key.as_deref().and_then(|k| Some((k, right_form(k)?))) {
                Some((key, form)) if message.starts_with("invalid type") => {
                    at(e.span(), format!("`{key}`: {message}; write it as {form}"))
                }
                _ => at(e.span(), message),
            }
        })?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let base = std::path::absolute(&base).unwrap_or(base);
        if raw.target.is_empty() {
            return Err(at(
                None,
                "no [[target]] table: a sweep needs at least one program".into(),
            ));
        }
        let defaults = &raw.defaults;
        for stages in defaults.stages.iter() {
            check_stages(stages).map_err(|m| at(Some(stages.span()), m))?;
        }
        for (key, value) in [
            ("timeout", &defaults.timeout),
            ("stage-timeout", &defaults.stage_timeout),
        ] {
            if let Some(v) = value {
                check_seconds(*v.get_ref())
                    .map_err(|m| at(Some(v.span()), format!("`{key}`: {m}")))?;
            }
        }
        let mut targets: Vec<Target> = Vec::new();
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for raw_target in &raw.target {
            let name = raw_target.name.get_ref();
            let name_at = |m: String| at(Some(raw_target.name.span()), m);
            check_name(name).map_err(|m| name_at(format!("`name`: {m}")))?;
            if let Some(first) =
                seen.insert(name.clone(), line_of(text, raw_target.name.span().start))
            {
                return Err(name_at(format!(
                    "`name`: a second target named \"{name}\" (the first is on line {first}); names must be unique"
                )));
            }
            let target_at = |span: std::ops::Range<usize>, m: String| {
                at(Some(span), format!("target \"{name}\": {m}"))
            };
            let command = raw_target.command.get_ref();
            if command.is_empty() || command[0].is_empty() {
                return Err(target_at(
                    raw_target.command.span(),
                    "`command` is empty: give the argv, e.g. [\"python\", \"train.py\"]".into(),
                ));
            }
            let (workdir, workdir_span) =
                match raw_target.workdir.as_ref().or(defaults.workdir.as_ref()) {
                    Some(w) => (base.join(w.get_ref()), Some(w.span())),
                    None => (base.clone(), None),
                };
            if on_this_machine && !workdir.is_dir() {
                return Err(target_at(
                    workdir_span.unwrap_or(raw_target.name.span()),
                    format!("`workdir`: {} is not a directory", workdir.display()),
                ));
            }
            let argv: Vec<OsString> = command.iter().map(OsString::from).collect();
            if on_this_machine {
                crate::plan::program::check(&argv, &workdir)
                    .map_err(|e| target_at(raw_target.command.span(), format!("`command`: {e}")))?;
            }
            let stages = raw_target.stages.as_ref().or(defaults.stages.as_ref());
            if let Some(s) = &raw_target.stages {
                check_stages(s).map_err(|m| target_at(s.span(), m))?;
            }
            for (key, value) in [
                ("timeout", &raw_target.timeout),
                ("stage-timeout", &raw_target.stage_timeout),
            ] {
                if let Some(v) = value {
                    check_seconds(*v.get_ref())
                        .map_err(|m| target_at(v.span(), format!("`{key}`: {m}")))?;
                }
            }
            let mut env = defaults.env.clone();
            env.extend(raw_target.env.clone());
            let timeout = raw_target
                .timeout
                .as_ref()
                .or(defaults.timeout.as_ref())
                .map_or(DEFAULT_TIMEOUT, |t| *t.get_ref());
            let mut run_args = defaults.run_args.clone();
            run_args.extend(raw_target.run_args.clone());
            targets.push(Target {
                name: name.clone(),
                command: command.clone(),
                workdir,
                env,
                stages: stages.map(|s| s.get_ref().clone()),
                timeout: Duration::from_secs_f64(timeout),
                stage_timeout: raw_target
                    .stage_timeout
                    .as_ref()
                    .or(defaults.stage_timeout.as_ref())
                    .map(|t| *t.get_ref()),
                tags: raw_target.tags.clone(),
                expect: raw_target.expect,
                run_args,
            });
        }
        Ok(SweepFile {
            path: path.to_path_buf(),
            text: text.to_string(),
            targets,
        })
    }

    /// The sweep id: a hash of the file's bytes. Two shards merge only if
    /// they ran the same file.
    pub fn id(&self) -> String {
        SweepFile::id_of(&self.text)
    }

    /// The sweep id of a sweep file's text.
    pub fn id_of(text: &str) -> String {
        let mut hash = cudawatch_parsers::site::Fnv::default();
        hash.write(text.as_bytes());
        format!("{:016x}", hash.finish())
    }
}

/// The 1-based line of byte `offset`.
/// The key of the `key = value` line holding `offset`.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

/// How each key of a target is written, for a type mistake's message.
fn right_form(key: &str) -> Option<&'static str> {
    Some(match key {
        "name" => "name = \"resnet-step\"",
        "command" => {
            "command = [\"python\", \"train.py\"] (the program and its arguments, one string each)"
        }
        "workdir" => "workdir = \"models/resnet\"",
        "env" => "env = { CUDA_VISIBLE_DEVICES = \"0\" }",
        "stages" => "stages = [\"plain\", \"memcheck\"]",
        "timeout" => "timeout = 3600 (seconds, a number)",
        "stage-timeout" => "stage-timeout = 600 (seconds, a number)",
        "tags" => "tags = [\"nightly\"]",
        "expect" => "expect = \"clean\" (or \"findings\", \"conclusive\")",
        "run-args" => "run-args = [\"--fail-on\", \"warning\"]",
        _ => return None,
    })
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.+".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "\"{}\" cannot name a directory: use letters, digits, `-`, `_`, `.` and `+`",
            name.escape_default()
        ))
    }
}

fn check_stages(stages: &Spanned<Vec<String>>) -> Result<(), String> {
    if stages.get_ref().is_empty() {
        return Err("`stages` is empty".into());
    }
    match stages
        .get_ref()
        .iter()
        .find(|s| !Tool::STAGES.iter().any(|t| t.name() == s.as_str()))
    {
        Some(bad) => Err(format!(
            "`stages`: unknown stage \"{}\"; stages are {}",
            bad.escape_default(),
            Tool::STAGES.map(Tool::name).join(", ")
        )),
        None => Ok(()),
    }
}

fn check_seconds(value: f64) -> Result<(), String> {
    if value.is_finite() && value > 0.0 && value <= 365.0 * 24.0 * 3600.0 {
        Ok(())
    } else {
        Err(format!(
            "{value} is not a number of seconds from 0 to a year"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        SweepFile::parse(Path::new("sweep.toml"), text)
            .expect_err("an error")
            .to_string()
    }

    #[test]
    fn mistakes_name_the_file_line_and_key() {
        let e = error("[[target]]\nname = \"a\"\ncomand = [\"true\"]\n");
        assert!(e.starts_with("sweep.toml:3: unknown field `comand`"), "{e}");
        let e = error(
            "[[target]]\nname = \"a\"\ncommand = [\"true\"]\n[[target]]\nname = \"a\"\ncommand = [\"true\"]\n",
        );
        assert!(
            e.starts_with(
                "sweep.toml:5: `name`: a second target named \"a\" (the first is on line 2)"
            ),
            "{e}"
        );
        let e =
            error("[[target]]\nname = \"a\"\ncommand = [\"true\"]\nworkdir = \"no/such/dir\"\n");
        assert!(
            e.starts_with("sweep.toml:4: target \"a\": `workdir`:")
                && e.ends_with("is not a directory"),
            "{e}"
        );
        let e = error("[[target]]\nname = \"a\"\ncommand = [\"./no-such-program\"]\n");
        assert!(
            e.starts_with("sweep.toml:3: target \"a\": `command`: cannot run `./no-such-program`"),
            "{e}"
        );
        let e = error("[[target]]\nname = \"a\"\ncommand = [\"true\"]\nstages = [\"memchek\"]\n");
        assert!(
            e.contains(":4: target \"a\": `stages`: unknown stage \"memchek\""),
            "{e}"
        );
        let e = error("[[target]]\nname = \"a\"\ncommand = \"python train.py\"\n");
        assert!(
            e.starts_with("sweep.toml:3: `command`: invalid type")
                && e.contains("write it as command = [\"python\", \"train.py\"]"),
            "{e}"
        );
        let e = error("[[target]]\nname = \"a\"\ncommand = [\"true\"]\ntimeout = \"10m\"\n");
        assert!(
            e.contains(":4: `timeout`: invalid type") && e.contains("timeout = 3600"),
            "{e}"
        );
        let e = error("[[target]]\nname = \"../x\"\ncommand = [\"true\"]\n");
        assert!(e.starts_with("sweep.toml:2: `name`:"), "{e}");
        assert!(error("").contains("no [[target]]"));
    }

    #[test]
    fn defaults_apply_and_targets_override_them() {
        let file = SweepFile::parse(
            Path::new("sweep.toml"),
            "[defaults]\nstages = [\"plain\"]\ntimeout = 60\nenv = { A = \"1\", B = \"1\" }\n\
             [[target]]\nname = \"a\"\ncommand = [\"true\"]\n\
             [[target]]\nname = \"b\"\ncommand = [\"true\"]\nstages = [\"memcheck\"]\nenv = { B = \"2\" }\nexpect = \"findings\"\n",
        )
        .unwrap();
        let [a, b] = &file.targets[..] else { panic!() };
        assert_eq!(a.stages.as_deref(), Some(&["plain".to_string()][..]));
        assert_eq!(b.stages.as_deref(), Some(&["memcheck".to_string()][..]));
        assert_eq!(a.timeout, Duration::from_secs(60));
        assert_eq!(b.env["A"], "1");
        assert_eq!(b.env["B"], "2");
        assert_eq!(b.expect, Expect::Findings);
        assert_eq!(file.id().len(), 16);
    }
}
