//! Every output format, rendered from the same [`Report`]. Human output goes
//! to stderr; a machine format may claim stdout (`--format json` or
//! `--report FORMAT=-`), the others go to files.

pub mod describe;
pub mod diff;
pub mod doctor;
pub mod explain;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod memory;
pub mod sarif;
pub mod stderr;
pub mod style;
pub mod sweep;
pub mod terminal;
pub mod text;
pub mod untrusted;

use std::io::Write;
use std::path::PathBuf;

use cudawatch_model::{Judgement, Report};

use crate::errors::ExpectedError;

/// A format: one function from a document to bytes. Every document
/// cudawatch writes goes through one: a run's report with its judgement
/// ([`Judged`]), a merged sweep, a diff. Each format keeps its own rule for
/// text from tools and foreign reports: JSON (and SARIF) stay lossless,
/// Markdown and the terminal neutralise it, XML and HTML escape it.
pub trait Exporter<Doc: ?Sized> {
    /// Renders the whole document.
    fn render(&self, doc: &Doc) -> Vec<u8>;
}

/// A run's report with what it adds up to under the policy.
#[derive(Clone, Copy)]
pub struct Judged<'a> {
    /// What was found.
    pub report: &'a Report,
    /// The checklist, verdict and exit code.
    pub judgement: &'a Judgement,
}

/// Where one export goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output.
    Stdout,
    /// A file, created or truncated.
    File(PathBuf),
}

/// The formats `--report` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// The complete model.
    Json,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
    /// JUnit XML for CI test views.
    Junit,
    /// A Markdown summary.
    Markdown,
    /// One self-contained HTML page.
    Html,
}

impl ReportFormat {
    /// The name `--report` takes.
    pub fn name(self) -> &'static str {
        match self {
            ReportFormat::Json => "json",
            ReportFormat::Sarif => "sarif",
            ReportFormat::Junit => "junit",
            ReportFormat::Markdown => "markdown",
            ReportFormat::Html => "html",
        }
    }

    fn exporter(self) -> Box<dyn for<'a> Exporter<Judged<'a>>> {
        match self {
            ReportFormat::Json => Box::new(json::JsonExporter),
            ReportFormat::Sarif => Box::new(sarif::SarifExporter),
            ReportFormat::Junit => Box::new(junit::JunitExporter),
            ReportFormat::Markdown => Box::new(markdown::MarkdownExporter),
            ReportFormat::Html => Box::new(html::HtmlExporter),
        }
    }
}

/// One `--report FORMAT[=PATH]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportSpec {
    /// What to write.
    pub format: ReportFormat,
    /// Where.
    pub target: Destination,
}

/// Parses `sarif=out.sarif`, `junit`, `json=-`.
pub fn parse_spec(text: &str) -> Result<ReportSpec, ExpectedError> {
    let (name, path) = text.split_once('=').unwrap_or((text, "-"));
    let format = match name {
        "json" => ReportFormat::Json,
        "sarif" => ReportFormat::Sarif,
        "junit" => ReportFormat::Junit,
        "markdown" | "md" => ReportFormat::Markdown,
        "html" => ReportFormat::Html,
        other => {
            return Err(ExpectedError::Usage(format!(
                "unknown report format `{other}` in --report {text}: use json, sarif, junit, markdown or html"
            )));
        }
    };
    let target = if path == "-" || path.is_empty() {
        Destination::Stdout
    } else {
        Destination::File(PathBuf::from(path))
    };
    Ok(ReportSpec { format, target })
}

/// Where the report goes: the exports asked for, checked.
#[derive(Debug, Clone, Default)]
pub struct OutputSettings {
    /// Every export, at most one of them on stdout.
    pub reports: Vec<ReportSpec>,
    /// Where the human report goes: stdout for `report` and `parse` (their
    /// product, `cudawatch report r.json > r.txt`) unless a machine format
    /// claims it; stderr during a run, beside its progress lines.
    pub human_on_stdout: bool,
    /// The checks of doctor's a live run said above the report, before its
    /// stages (their ids): the report names those only, and says the rest.
    pub environment_said: Vec<String>,
    /// Only the verdict on stderr: `report` and `parse` whose machine
    /// output is on stdout (`cudawatch report r.json --format json | jq`),
    /// where the whole human report would bury the terminal; a run keeps
    /// its human report beside its progress lines.
    pub human_brief: bool,
}

impl OutputSettings {
    /// The exports `--report` values and `--format json` ask for; fails on
    /// a bad spec or two claims on stdout.
    pub fn new(reports: &[String], json_on_stdout: bool) -> Result<OutputSettings, ExpectedError> {
        let mut specs: Vec<ReportSpec> = reports
            .iter()
            .map(|r| parse_spec(r))
            .collect::<Result<_, _>>()?;
        if json_on_stdout {
            specs.push(ReportSpec {
                format: ReportFormat::Json,
                target: Destination::Stdout,
            });
        }
        if specs
            .iter()
            .filter(|s| s.target == Destination::Stdout)
            .count()
            > 1
        {
            return Err(ExpectedError::Usage(
                "only one report can go to stdout: give the others a path, e.g. --report sarif=cudawatch.sarif".into(),
            ));
        }
        Ok(OutputSettings {
            reports: specs,
            human_on_stdout: false,
            environment_said: Vec::new(),
            human_brief: false,
        })
    }

    /// Only the verdict on stderr when a machine format is on stdout
    /// (`report`, `parse`: their product is the machine report then).
    pub fn brief_beside_machine_output(mut self) -> OutputSettings {
        self.human_brief = self.reports.iter().any(|s| s.target == Destination::Stdout);
        self
    }

    /// The human report on stdout, unless a machine format is there.
    pub fn human_on_stdout(mut self) -> OutputSettings {
        self.human_on_stdout = !self.reports.iter().any(|s| s.target == Destination::Stdout);
        self
    }
}

/// Renders the report: the human report (or its verdict alone, beside a
/// machine report on stdout from `report` or `parse`), then every export.
pub fn render(
    report: &Report,
    judgement: &Judgement,
    output: &OutputSettings,
    styles: style::Styles,
) -> Result<(), ExpectedError> {
    write_human(output, styles, |style, width| {
        if output.human_brief {
            terminal::verdict(&untrusted::walk(judgement), style)
        } else {
            terminal::render(report, judgement, style, width, &output.environment_said)
        }
    })?;
    let doc = Judged { report, judgement };
    write_exports(output, |format| format.exporter().render(&doc))
}

/// Writes the human report where `output` puts it, fitted to that
/// stream's width and styled for it: stdout (`report`, `parse`), else
/// stderr beside the progress lines. A closed stderr is not worth failing
/// for; the exports and the run directory still carry everything.
pub fn write_human(
    output: &OutputSettings,
    styles: style::Styles,
    text: impl FnOnce(style::Style, Option<usize>) -> String,
) -> Result<(), ExpectedError> {
    if output.human_on_stdout {
        let width = width_of(&std::io::stdout());
        write_stdout(text::fit(&text(styles.stdout, width), width).as_bytes())
    } else {
        let width = width_of(&std::io::stderr());
        let rendered = text::fit(&text(styles.stderr, width), width);
        let _ = std::io::stderr().lock().write_all(rendered.as_bytes());
        Ok(())
    }
}

/// Writes every export `output` asks for, each format's bytes from
/// `bytes_of`: to its file or stdout, and Markdown to
/// `$GITHUB_STEP_SUMMARY` too. One export that cannot be written must not
/// cost the others: all are written, then the first failure is returned.
pub fn write_exports(
    output: &OutputSettings,
    bytes_of: impl Fn(ReportFormat) -> Vec<u8>,
) -> Result<(), ExpectedError> {
    let mut first_error = None;
    for spec in &output.reports {
        let bytes = bytes_of(spec.format);
        let written = match &spec.target {
            Destination::Stdout => write_stdout(&bytes),
            Destination::File(path) => write_file(path, &bytes).inspect(|()| {
                stderr::line(&format!(
                    "wrote the {} report: {}",
                    spec.format.name(),
                    untrusted::clean(&path.display().to_string())
                ));
            }),
        };
        let summary = if spec.format == ReportFormat::Markdown {
            append_step_summary(&bytes)
        } else {
            Ok(())
        };
        if let Err(error) = written.and(summary) {
            first_error.get_or_insert(error);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The columns of a terminal stream, or `$COLUMNS` when it is not a
/// terminal and that is set; for a pipe while stderr is a terminal
/// (`cudawatch report r.json | less`), the terminal's: the pager shows it
/// there. `None` (no limit) for a file, or a pipe with no terminal.
pub fn width_of<S: std::io::IsTerminal + std::os::fd::AsFd>(stream: &S) -> Option<usize> {
    use std::io::IsTerminal;
    use std::os::fd::AsFd;
    let from_env = || {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|c| *c >= 40)
    };
    let columns = |terminal: rustix::fd::BorrowedFd<'_>| {
        rustix::termios::tcgetwinsize(terminal)
            .ok()
            .map(|w| usize::from(w.ws_col))
            .filter(|c| *c >= 40)
    };
    if stream.is_terminal() {
        return columns(stream.as_fd()).or_else(from_env);
    }
    let piped = rustix::fs::fstat(stream).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo
    });
    let stderr = std::io::stderr();
    if piped && stderr.is_terminal() {
        return from_env().or_else(|| columns(stderr.as_fd()));
    }
    from_env()
}

/// Checks before a long run that every file target can be written: its
/// directory exists (cudawatch does not create directories a typo named,
/// as a shell redirection does not) and the file can be opened.
pub fn check_targets(output: &OutputSettings) -> Result<(), ExpectedError> {
    for spec in &output.reports {
        if let Destination::File(path) = &spec.target {
            check_parent(path)?;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| write_error(path, e))?;
        }
    }
    Ok(())
}

fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), ExpectedError> {
    check_parent(path)?;
    std::fs::write(path, bytes).map_err(|e| write_error(path, e))
}

fn check_parent(path: &std::path::Path) -> Result<(), ExpectedError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => Err(ExpectedError::Write {
            target: path.display().to_string(),
            message: format!(
                "the directory {} does not exist: create it first (mkdir -p {})",
                dir.display(),
                dir.display()
            ),
        }),
        _ => Ok(()),
    }
}

fn write_error(path: &std::path::Path, e: std::io::Error) -> ExpectedError {
    ExpectedError::Write {
        target: path.display().to_string(),
        message: e.to_string(),
    }
}

/// GitHub Actions shows `$GITHUB_STEP_SUMMARY` on the run's page.
fn append_step_summary(markdown: &[u8]) -> Result<(), ExpectedError> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return Ok(());
    };
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        file.write_all(markdown)
    };
    write().map_err(|e| ExpectedError::Write {
        target: "$GITHUB_STEP_SUMMARY".into(),
        message: e.to_string(),
    })
}

/// A path as the report shows it to tools and people that want it from
/// the project (a compiler, ripgrep, SARIF's `%SRCROOT%`): the report's own
/// `./tests/oob.cu` without its `./`, an absolute path under the working
/// directory relative to it; true when the result is relative.
pub fn relative_to_cwd(path: &str) -> (String, bool) {
    if let Some(rel) = cudawatch_model::in_project(path) {
        return (rel.to_string(), true);
    }
    if let Ok(cwd) = std::env::current_dir()
        && let Ok(rel) = std::path::Path::new(path).strip_prefix(&cwd)
        && !rel.as_os_str().is_empty()
    {
        return (rel.to_string_lossy().into_owned(), true);
    }
    (path.to_string(), !path.starts_with('/'))
}

/// Writes human text to stdout, fitted to its width when it is a
/// terminal (or `$COLUMNS` is set): `explain`, `doctor`, `diff`, `config`.
pub fn write_text(text: &str) -> Result<(), ExpectedError> {
    write_stdout(text::fit(text, width_of(&std::io::stdout())).as_bytes())
}

/// Writes machine output to stdout. A closed pipe (`| head`) is the
/// reader's choice, not an error (ripgrep); anything else is a write error.
pub fn write_stdout(bytes: &[u8]) -> Result<(), ExpectedError> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(ExpectedError::Write {
            target: "stdout".into(),
            message: e.to_string(),
        }),
        _ => Ok(()),
    }
}

/// Escapes text for XML and HTML content and quoted attributes (JUnit and
/// the HTML report); drops control characters XML 1.0 cannot carry at all.
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_specs_name_format_and_target() {
        assert_eq!(
            parse_spec("sarif=a.sarif").unwrap().target,
            Destination::File("a.sarif".into())
        );
        assert_eq!(
            parse_spec("junit").unwrap(),
            ReportSpec {
                format: ReportFormat::Junit,
                target: Destination::Stdout
            }
        );
        assert_eq!(parse_spec("md=-").unwrap().format, ReportFormat::Markdown);
        assert!(
            parse_spec("pdf=x")
                .unwrap_err()
                .to_string()
                .contains("unknown report format `pdf`")
        );
    }

    #[test]
    fn two_reports_on_stdout_are_refused() {
        assert!(
            OutputSettings::new(&["sarif".into()], true)
                .unwrap_err()
                .to_string()
                .contains("only one report can go to stdout")
        );
    }
}
