//! `cudawatch parse FILE...`: detect each file's kind from its content,
//! group a directory's files by tool (a sanitizer's XML with its text log,
//! ncu's pages with its console log), and fold everything into one report.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use cudawatch_model::{InputKind, Report, Tool};
use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::detect::{HEAD_BYTES, detect, tool_hint, tool_line};

use crate::cli::args::ParseArgs;
use crate::cli::settings;
use crate::errors::ExpectedError;
use crate::render::style::Styles;

/// Runs `cudawatch parse`; returns the exit code. A file that cannot be
/// read at all is an error before anything is printed: a report of the
/// others would read as the whole story.
pub fn run(args: &ParseArgs, styles: Styles) -> Result<i32, ExpectedError> {
    let policy = settings::policy(&args.output)?;
    let output = settings::output(&args.output)?
        .human_on_stdout()
        .brief_beside_machine_output();
    let inputs = classify_all(&expand(&args.files)?)?;
    let report = parse_classified(&inputs);
    if args.explain_detection {
        crate::render::stderr::line(explain(&inputs, &report).trim_end());
    }
    let root = settings::source_root(&args.output);
    Ok(super::judge_and_render(
        report,
        &policy,
        &output,
        styles,
        Some(&root),
    ))
}

/// What each file was taken for, and what was read from it (`--explain-detection`).
fn explain(inputs: &[Classified], report: &Report) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("What each file was taken for:\n");
    for input in inputs {
        let path = input.path.to_string_lossy();
        let read: Vec<String> = report
            .inputs
            .iter()
            .filter(|i| i.path == path)
            .map(|i| {
                let totals = i
                    .summary
                    .as_ref()
                    .and_then(|s| s.errors)
                    .map_or_else(String::new, |e| {
                        format!(" (the tool counted {})", crate::words::plural(e, "error"))
                    });
                format!(
                    "{} as {:?}, {} read{totals}",
                    i.tool.name(),
                    i.kind,
                    crate::words::plural(i.records, "record")
                )
            })
            .collect();
        let notes: Vec<&str> = report
            .warnings
            .iter()
            .filter(|w| w.source == path)
            .map(|w| w.message.as_str())
            .collect();
        let _ = writeln!(
            out,
            "  {}: {:?}{}",
            crate::render::untrusted::clean(&path),
            input.kind,
            if input.bytes.is_some() {
                " (read once: not a regular file)"
            } else {
                ""
            }
        );
        if read.is_empty() {
            let _ = writeln!(
                out,
                "    nothing was read from it: not a tool output cudawatch knows"
            );
        }
        for line in read {
            let _ = writeln!(out, "    {line}");
        }
        for note in notes {
            let _ = writeln!(out, "    note: {}", crate::render::untrusted::clean(note));
        }
    }
    out
}

/// The files to read: each file as given, and the files of each directory
/// given (a folder of captures, one level, in name order, notes left out).
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ExpectedError> {
    let mut files = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            // `-` is stdin, as for every Unix filter; read once, whole.
            files.push(PathBuf::from("/dev/stdin"));
            continue;
        }
        let meta = std::fs::metadata(path).map_err(|e| input_error(path, e.to_string()))?;
        if meta.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| input_error(path, e.to_string()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && !is_notes(p))
                .collect();
            inside.sort();
            if inside.is_empty() {
                return Err(input_error(
                    path,
                    "a directory with no files to read".into(),
                ));
            }
            files.extend(inside);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Notes kept beside captures (a folder's README.md): no tool's output,
/// and their words about errors are not the program's. Read when named.
fn is_notes(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md"))
}

/// Detects what each file is. A pipe (`/dev/stdin`, `<(...)`) can be read
/// only once, so it is read whole here and parsed from memory; a regular
/// file is sniffed from its head and streamed later.
fn classify_all(paths: &[PathBuf]) -> Result<Vec<Classified>, ExpectedError> {
    paths
        .iter()
        .map(|path| {
            let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
            // A pipe is read through its descriptor (`-`, `<(...)`); a
            // FIFO or device named by a path waits or never ends.
            if !regular && !is_descriptor(path) {
                return Err(input_error(
                    path,
                    "not a regular file (a FIFO or device is never read): pipe it in as \
                     `cudawatch parse -` or save it to a file"
                        .into(),
                ));
            }
            let (head, bytes) = if regular {
                (head(path), None)
            } else {
                let mut all = Vec::new();
                let read = File::open(path).and_then(|f| {
                    f.take(crate::safe_files::MAX_ARTIFACT_BYTES)
                        .read_to_end(&mut all)
                });
                (
                    read.map(|_| all[..all.len().min(HEAD_BYTES)].to_vec()),
                    Some(all),
                )
            };
            let head = head.map_err(|e| input_error(path, e.to_string()))?;
            let mut kind = detect(&head);
            if kind == InputKind::ProgramOutput && head.len() == HEAD_BYTES {
                // Recognition does not stop at the head: a CI log's tool
                // output may start after megabytes of the build's.
                kind = match &bytes {
                    Some(all) => scan(std::io::Cursor::new(all)),
                    None => File::open(path)
                        .map(|f| scan(BufReader::new(f)))
                        .unwrap_or(kind),
                };
            }
            Ok(Classified {
                path: path.clone(),
                kind,
                tool: tool_hint(&path.to_string_lossy(), kind),
                bytes,
            })
        })
        .collect()
}

/// Whether `path` names an open descriptor, as `-` (`/dev/stdin`) and a
/// shell's `<(...)` (`/dev/fd/63`) do.
fn is_descriptor(path: &Path) -> bool {
    path == Path::new("/dev/stdin")
        || path.starts_with("/dev/fd")
        || path.starts_with("/proc/self/fd")
}

/// The kind of a log from its first tool line anywhere in it.
fn scan(reader: impl std::io::BufRead) -> InputKind {
    reader
        .split(b'\n')
        .map_while(Result::ok)
        .find_map(|line| tool_line(String::from_utf8_lossy(&line).trim_end()))
        .unwrap_or(InputKind::ProgramOutput)
}

/// A sanitizer run's XML and its log, paired by their names' stems
/// (`memcheck-a.xml` with `memcheck-a.stdout`, not with `memcheck-b.stdout`):
/// a log's warning (cut off, a tool failure) belongs to its own XML. One
/// XML and one log left with different stems are one run's; anything
/// else left is read on its own.
fn pair_by_stem<'a>(
    xmls: &[&'a Classified],
    texts: &[&'a Classified],
) -> Vec<(Option<&'a Classified>, Option<&'a Classified>)> {
    let stem = |c: &Classified| {
        let name = c
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        name.split('.').next().unwrap_or_default().to_string()
    };
    let mut texts_left: Vec<&Classified> = texts.to_vec();
    let mut pairs = Vec::new();
    let mut xmls_left = Vec::new();
    for xml in xmls {
        match texts_left.iter().position(|t| stem(t) == stem(xml)) {
            Some(at) => pairs.push((Some(*xml), Some(texts_left.remove(at)))),
            None => xmls_left.push(*xml),
        }
    }
    if let ([xml], [text]) = (xmls_left.as_slice(), texts_left.as_slice()) {
        pairs.push((Some(*xml), Some(*text)));
    } else {
        pairs.extend(xmls_left.into_iter().map(|x| (Some(x), None)));
        pairs.extend(texts_left.into_iter().map(|t| (None, Some(t))));
    }
    pairs
}

/// A file, what it is, and which tool it belongs to.
struct Classified {
    path: PathBuf,
    kind: InputKind,
    tool: Tool,
    /// The whole input, for one that could be read only once.
    bytes: Option<Vec<u8>>,
}

/// Folds the classified inputs into one report. An input that cannot be
/// read after all stands in it as unreadable, with the reason, which makes
/// the report inconclusive; the rest are still reported.
// Over 100 lines on purpose: every input kind read in one match over the
// classified files.
fn parse_classified(classified: &[Classified]) -> Report {
    let mut builder = ReportBuilder::new(env!("CARGO_PKG_VERSION"));
    // Group by (directory, tool): one sanitizer run leaves an XML and a log
    // side by side, one ncu run a raw page, a details page, source pages and a log.
    let mut groups: BTreeMap<(PathBuf, Tool), Vec<&Classified>> = BTreeMap::new();
    for c in classified {
        let dir = c.path.parent().map(Path::to_path_buf).unwrap_or_default();
        groups.entry((dir, c.tool)).or_default().push(c);
    }
    for ((_, tool), members) in groups {
        let of = |kind: InputKind| members.iter().filter(move |c| c.kind == kind);
        match tool {
            Tool::GlobalRace => {
                for c in of(InputKind::GlobalRace) {
                    global_race(c, &mut builder);
                }
            }
            Tool::Ncu => {
                let raw = of(InputKind::NcuRaw)
                    .next()
                    .and_then(|c| load(c, &mut builder));
                let details = of(InputKind::NcuDetails)
                    .next()
                    .and_then(|c| load(c, &mut builder));
                // Live `ncu --csv` output carries its console lines with the
                // page: the page is its log too.
                let log = of(InputKind::NcuLog)
                    .next()
                    .and_then(|c| load(c, &mut builder))
                    .or_else(|| {
                        [&raw, &details]
                            .into_iter()
                            .flatten()
                            .find(|(_, bytes)| bytes.windows(8).any(|w| w == b"==PROF=="))
                            .cloned()
                    });
                let sources: Vec<(String, Vec<u8>)> = of(InputKind::NcuSource)
                    .filter_map(|c| load(c, &mut builder))
                    .collect();
                let source_refs: Vec<(&str, &[u8])> = sources
                    .iter()
                    .map(|(n, b)| (n.as_str(), b.as_slice()))
                    .collect();
                let evidence =
                    builder.ncu(as_ref(&raw), as_ref(&details), &source_refs, as_ref(&log));
                // Call stacks (the details page as text) go into the
                // launches just read.
                for c in of(InputKind::NcuStacks) {
                    if let Some((name, bytes)) = load(c, &mut builder) {
                        builder.ncu_stacks(&name, &bytes);
                    }
                }
                // A details page of its header alone (cut, or of a run
                // that profiled nothing) measured nothing (the raw page has
                // its own check below).
                if let Some((name, bytes)) = &details
                    && String::from_utf8_lossy(bytes)
                        .lines()
                        .filter(|l| !l.trim().is_empty() && !l.starts_with("==PROF=="))
                        .count()
                        <= 1
                {
                    builder.warn(
                        name,
                        "an ncu page of its header alone, no row: nothing was measured".into(),
                    );
                }
                if let Some((name, _)) = &raw
                    && evidence.kernels == 0
                {
                    builder.warn(
                        name,
                        "an ncu page with no kernel launch in it: nothing was measured".into(),
                    );
                }
                if raw.is_none()
                    && details.is_none()
                    && sources.is_empty()
                    && let Some((name, _)) = &log
                {
                    // Read, but nothing in it measures coalescing: never clean.
                    builder.warn(
                        name,
                        "ncu's console lines only, no page with coalescing figures \
                         (ncu --import REPORT --csv --page raw)"
                            .into(),
                    );
                }
            }
            _ => {
                let xmls: Vec<&Classified> = of(InputKind::SanitizerXml).copied().collect();
                let texts: Vec<&Classified> = of(InputKind::SanitizerText).copied().collect();
                for (xml, text) in pair_by_stem(&xmls, &texts) {
                    let text = text.and_then(|c| load(c, &mut builder));
                    let xml = match xml {
                        Some(c) => match open_stream(c) {
                            Ok(reader) => Some((c.path.to_string_lossy().into_owned(), reader)),
                            Err(e) => {
                                unreadable(&mut builder, c, &e);
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
                    if let Some((name, _)) = &text
                        && !evidence.summary.has_closing_line()
                        && evidence.summary.failures.is_empty()
                    {
                        // A log cut by a timeout, a crash or a CI step's
                        // limit: what it holds is kept, but it vouches for nothing.
                        builder.warn(
                            name,
                            format!(
                                "ends before compute-sanitizer's summary line (ERROR SUMMARY or \
                                 RACECHECK SUMMARY): the run was cut off or the log was, so it is \
                                 not clean{}",
                                crate::tools::sanitizer::cut_records(evidence.summary.cut_records)
                            ),
                        );
                    }
                }
                for c in of(InputKind::ProgramOutput) {
                    let Some((name, bytes)) = load(c, &mut builder) else {
                        continue;
                    };
                    let found = builder.program_output(&name, &bytes);
                    if bytes.is_empty() && names_tool_output(&c.path) {
                        // An empty tool file beside good ones (a
                        // racecheck.xml its run never wrote) must not read
                        // as given; an empty program stderr is just quiet.
                        builder.warn(
                            &name,
                            "is empty: recognised nothing, so it vouches for nothing".into(),
                        );
                    } else if found == 0 && looks_binary(&bytes) {
                        builder.warn(
                            &name,
                            "recognised nothing: not a tool output cudawatch knows".into(),
                        );
                    }
                }
            }
        }
    }
    let mut report = builder.finish();
    nothing_recognised(&mut report);
    report
}

/// The global-race tool's lines, each race placed on its lines through the
/// SASS beside them, as the stage lays it out (`modules/N.sass`) or as a
/// capture of the tool's first version named it (`STEM.N.sass`).
fn global_race(c: &Classified, builder: &mut ReportBuilder) {
    let Some((name, bytes)) = load(c, builder) else {
        return;
    };
    let output = cudawatch_parsers::global_race::parse(&String::from_utf8_lossy(&bytes));
    let dir = c.path.parent().unwrap_or(Path::new("."));
    let stem = c
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tables, _) = crate::tools::global_race::line_tables(&output, |module| {
        vec![
            dir.join("modules").join(format!("{module}.sass")),
            dir.join(format!("{stem}.{module}.sass")),
        ]
    });
    builder.global_race(&name, &output, &tables);
    if output.launches.is_empty() {
        builder.warn(
            &name,
            "the global-race tool's lines hold no launch: nothing was checked".into(),
        );
    }
}

/// Whether a file's name says it is a tool's output (`racecheck.xml`,
/// `ncu-raw.csv`, `memcheck.log`), not a program's.
fn names_tool_output(path: &std::path::Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    // A tool run's stderr is its program's: compute-sanitizer and ncu
    // write their own words on stdout, so an empty `memcheck.stderr` is a
    // quiet program, as every clean capture leaves it.
    if name.ends_with("stderr") {
        return false;
    }
    name.ends_with(".xml")
        || name.ends_with(".csv")
        || [
            "memcheck",
            "racecheck",
            "initcheck",
            "synccheck",
            "ncu",
            "sanitizer",
        ]
        .iter()
        .any(|tool| name.contains(tool))
}

/// Input in which no tool output and no CUDA error was recognised (an empty
/// pipe, a README, a training log, a log of `compute-sanitizer: command not
/// found`) checked nothing: each such file is named, and the report is
/// inconclusive, never clean.
fn nothing_recognised(report: &mut Report) {
    let tool_output = report
        .inputs
        .iter()
        .any(|i| i.kind != InputKind::ProgramOutput);
    if tool_output || !report.findings.is_empty() {
        return;
    }
    let unwarned: Vec<String> = report
        .inputs
        .iter()
        .filter(|i| !report.warnings.iter().any(|w| w.source == i.path))
        .map(|i| i.path.clone())
        .collect();
    for path in unwarned {
        report.warnings.push(cudawatch_model::Warning {
            source: path,
            message: "recognised nothing: no compute-sanitizer or ncu output and no CUDA error \
                      in it, so nothing was checked"
                .into(),
        });
    }
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

/// A streaming reader of the input: the file, or the bytes already read.
fn open_stream(c: &Classified) -> std::io::Result<Box<dyn std::io::BufRead + '_>> {
    Ok(match &c.bytes {
        Some(bytes) => Box::new(std::io::Cursor::new(bytes.as_slice())),
        None => Box::new(BufReader::with_capacity(1 << 20, File::open(&c.path)?)),
    })
}

fn load(c: &Classified, builder: &mut ReportBuilder) -> Option<(String, Vec<u8>)> {
    if let Some(bytes) = &c.bytes {
        return Some((c.path.to_string_lossy().into_owned(), bytes.clone()));
    }
    match std::fs::read(&c.path) {
        Ok(bytes) => Some((c.path.to_string_lossy().into_owned(), bytes)),
        Err(e) => {
            unreadable(builder, c, &e);
            None
        }
    }
}

/// A file that could be classified but not read in full (removed or made
/// unreadable meanwhile).
fn unreadable(builder: &mut ReportBuilder, c: &Classified, error: &std::io::Error) {
    let path = c.path.to_string_lossy();
    builder.unreadable(&path, c.kind, c.tool, format!("cannot read: {error}"));
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
