//! `cudawatch parse FILE...`: detect each file's kind from its content,
//! group a directory's files by tool (a sanitizer's XML with its text log,
//! ncu's pages with its console log), and fold everything into one report.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use cudawatch_model::{InputKind, Report, Tool};
use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::detect::{HEAD_BYTES, detect, tool_hint};

use crate::cli::args::ParseArgs;
use crate::cli::settings;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::render::style::Style;

/// Runs `cudawatch parse`; returns the exit code.
pub fn run(args: &ParseArgs, style: Style) -> Result<i32, ExpectedError> {
    let policy = settings::policy(&args.output)?;
    let output = settings::output(&args.output)?;
    let (report, errors) = parse_files(&args.files);
    let mut code = super::conclude(report, &policy, &output, style);
    for error in &errors {
        eprintln!("error: {error}");
    }
    if !errors.is_empty() {
        code = exit_codes::worst(code, exit_codes::SETUP_ERROR);
    }
    Ok(code)
}

/// A file, what it is, and which tool it belongs to.
struct Classified {
    path: PathBuf,
    kind: InputKind,
    tool: Tool,
}

/// Folds `files` into one report. Files that cannot be read at all come
/// back as one-line errors; the rest are still reported.
pub fn parse_files(files: &[PathBuf]) -> (Report, Vec<ExpectedError>) {
    let mut builder = ReportBuilder::new(env!("CARGO_PKG_VERSION"));
    let mut errors = Vec::new();
    let mut classified = Vec::new();
    for path in files {
        match head(path) {
            Ok(bytes) => {
                let kind = detect(&bytes);
                let tool = tool_hint(&path.to_string_lossy(), kind);
                classified.push(Classified {
                    path: path.clone(),
                    kind,
                    tool,
                });
            }
            Err(e) => errors.push(input_error(path, e.to_string())),
        }
    }
    // Group by (directory, tool): one sanitizer run leaves an XML and a log
    // side by side, one ncu run a raw page, a details page, source pages and a log.
    let mut groups: BTreeMap<(PathBuf, Tool), Vec<&Classified>> = BTreeMap::new();
    for c in &classified {
        let dir = c.path.parent().map(Path::to_path_buf).unwrap_or_default();
        groups.entry((dir, c.tool)).or_default().push(c);
    }
    for ((_, tool), members) in groups {
        let of = |kind: InputKind| members.iter().filter(move |c| c.kind == kind);
        match tool {
            Tool::Ncu => {
                let raw = of(InputKind::NcuRaw)
                    .next()
                    .and_then(|c| load(c, &mut errors));
                let details = of(InputKind::NcuDetails)
                    .next()
                    .and_then(|c| load(c, &mut errors));
                let log = of(InputKind::NcuLog)
                    .next()
                    .and_then(|c| load(c, &mut errors));
                let sources: Vec<(String, Vec<u8>)> = of(InputKind::NcuSource)
                    .filter_map(|c| load(c, &mut errors))
                    .collect();
                let source_refs: Vec<(&str, &[u8])> = sources
                    .iter()
                    .map(|(n, b)| (n.as_str(), b.as_slice()))
                    .collect();
                builder.ncu(as_ref(&raw), as_ref(&details), &source_refs, as_ref(&log));
            }
            _ => {
                let xmls: Vec<&&Classified> = of(InputKind::SanitizerXml).collect();
                let texts: Vec<&&Classified> = of(InputKind::SanitizerText).collect();
                // Pair the first XML with the first log; any extra file of the
                // same tool in the same directory is read on its own.
                let pairs = xmls.len().max(texts.len());
                for i in 0..pairs {
                    let text = texts.get(i).and_then(|c| load(c, &mut errors));
                    let xml = match xmls.get(i) {
                        Some(c) => match File::open(&c.path) {
                            Ok(f) => Some((
                                c.path.to_string_lossy().into_owned(),
                                BufReader::with_capacity(1 << 20, f),
                            )),
                            Err(e) => {
                                errors.push(input_error(&c.path, e.to_string()));
                                None
                            }
                        },
                        None => None,
                    };
                    let (xml_name, xml_reader) = match xml {
                        Some((n, r)) => (n, Some(r)),
                        None => (String::new(), None),
                    };
                    let evidence = builder.sanitizer(
                        tool,
                        xml_reader.map(|r| (xml_name.as_str(), r)),
                        as_ref(&text),
                    );
                    if let (Some(e), Some(c)) = (evidence.xml_error, xmls.get(i)) {
                        errors.push(input_error(&c.path, e.to_string()));
                    }
                }
                for c in of(InputKind::ProgramOutput) {
                    if let Some((name, bytes)) = load(c, &mut errors)
                        && builder.program_output(&name, &bytes) == 0
                        && !bytes.is_empty()
                        && looks_binary(&bytes)
                    {
                        builder.warn(
                            &name,
                            "recognised nothing: not a tool output cudawatch knows".into(),
                        );
                    }
                }
            }
        }
    }
    (builder.finish(), errors)
}

fn looks_binary(bytes: &[u8]) -> bool {
    let sample = &bytes[..bytes.len().min(4096)];
    let odd = sample
        .iter()
        .filter(|b| **b == 0 || (**b < 0x09) || (**b > 0x0d && **b < 0x20))
        .count();
    odd * 10 > sample.len()
}

fn as_ref(named: &Option<(String, Vec<u8>)>) -> Option<(&str, &[u8])> {
    named.as_ref().map(|(n, b)| (n.as_str(), b.as_slice()))
}

fn load(c: &Classified, errors: &mut Vec<ExpectedError>) -> Option<(String, Vec<u8>)> {
    match std::fs::read(&c.path) {
        Ok(bytes) => Some((c.path.to_string_lossy().into_owned(), bytes)),
        Err(e) => {
            errors.push(input_error(&c.path, e.to_string()));
            None
        }
    }
}

fn head(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(HEAD_BYTES);
    File::open(path)?
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn input_error(path: &Path, message: String) -> ExpectedError {
    ExpectedError::Input {
        path: path.display().to_string(),
        message,
    }
}
