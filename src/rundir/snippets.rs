//! Source snippets for findings: read from disk once, where the report is
//! made, and kept in the report, so every format (and a report rendered
//! later on a machine without the sources) shows the same lines.
//!
//! The file names come from tool output, which may be someone else's: only
//! source files (by extension) under the source root (the working
//! directory, or `--source-root`) are read, never in a hidden directory
//! (`.ssh`, `.git`), never under a root that is `/` or the home directory
//! itself, opened once without following a symlink at any component. A received JSON report is rendered
//! with the snippets it carries; nothing is read for it.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use cudawatch_model::{Report, Snippet};

/// Lines shown either side of a finding's line.
const CONTEXT: u32 = 2;
/// Source files larger than this are not read (generated code, not the user's).
const MAX_FILE_BYTES: u64 = 8 << 20;
/// Longer lines are cut, so a minified line cannot flood a report.
const MAX_LINE_CHARS: usize = 240;

/// Source files by extension: a tool's file name is someone else's words,
/// and only the user's source may end up in a report.
const SOURCE_EXTENSIONS: &[&str] = &[
    "cu", "cuh", "c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "inl", "inc", "ipp",
    "tpp", "cl", "py", "pyx", "pxd", "pyi", "f", "f90", "f95", "cuf", "jl", "rs", "ptx",
];

/// Why snippets are not read under `root` at all, if they are not: a root
/// of `/` or the home directory itself would let a capture that names
/// `~/.ssh/id_ed25519` or `/etc/shadow` put it in the report.
pub fn refused_root(root: &Path) -> Option<String> {
    let real = root.canonicalize().ok()?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    let what = if real == Path::new("/") {
        "the filesystem's root"
    } else if home.as_deref() == Some(real.as_path()) {
        "your home directory"
    } else {
        return None;
    };
    Some(format!(
        "no source snippets: the source root is {what} ({}), which holds more than source; \
         run from your project or pass --source-root PROJECT",
        real.display()
    ))
}

/// Fills in the snippet of every site that has a location and no snippet
/// yet, from the user's source files under `root`; files that cannot be
/// read, are not source, or lie elsewhere leave the site without one.
pub fn attach(report: &mut Report, root: &Path) {
    if let Some(why) = refused_root(root) {
        if report.findings.iter().any(|s| s.location.is_some()) {
            report.warnings.push(cudawatch_model::Warning {
                source: "snippets".into(),
                message: why,
            });
        }
        return;
    }
    let Ok(real_root) = root.canonicalize() else {
        return;
    };
    let given_root = std::path::absolute(root).unwrap_or_else(|_| real_root.clone());
    let mut files: HashMap<String, Option<Vec<String>>> = HashMap::new();
    for site in &mut report.findings {
        let Some(location) = &site.location else {
            continue;
        };
        if site.snippet.is_some() || location.line == 0 {
            continue;
        }
        let lines = files.entry(location.file.clone()).or_insert_with(|| {
            beneath(&[&real_root, &given_root], &location.file)
                .and_then(|rel| read_lines(&real_root, &rel))
        });
        if let Some(lines) = lines {
            site.snippet = around(lines, location.line);
        }
    }
}

/// The path a tool named, relative to the root, if it is a source file
/// under it by name: no `..`, no hidden component (`.ssh`, `.git`), a
/// source extension. Symlinks are not resolved here: [`read_lines`] opens
/// the file without following any.
fn beneath(roots: &[&Path], file: &str) -> Option<PathBuf> {
    let named = Path::new(file);
    let rel = if named.is_absolute() {
        roots.iter().find_map(|r| named.strip_prefix(r).ok())?
    } else {
        named
    };
    let mut clean = PathBuf::new();
    for part in rel.components() {
        match part {
            Component::CurDir => {}
            Component::Normal(name) if !name.to_string_lossy().starts_with('.') => clean.push(name),
            _ => return None,
        }
    }
    let source = clean
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e.as_str()));
    source.then_some(clean)
}

/// Reads `rel` under `root`, opened once, one component at a time, never
/// through a symlink (a link swapped in between a check and an open cannot
/// redirect the read), only a regular file of bounded size.
fn read_lines(root: &Path, rel: &Path) -> Option<Vec<String>> {
    use rustix::fs::{Mode, OFlags, openat};
    let mut at = rustix::fs::open(
        root,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let parts: Vec<_> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let flags = OFlags::RDONLY
            | OFlags::CLOEXEC
            | OFlags::NOFOLLOW
            | if last {
                OFlags::NONBLOCK
            } else {
                OFlags::DIRECTORY
            };
        at = openat(&at, part.as_os_str(), flags, Mode::empty()).ok()?;
    }
    let file = std::fs::File::from(at);
    let meta = file.metadata().ok()?;
    if !meta.file_type().is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).ok()?;
    Some(
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(|l| l.chars().take(MAX_LINE_CHARS).collect())
            .collect(),
    )
}

/// Python files under the root (not in hidden directories, virtual
/// environments or site-packages), at most [`MAX_PYTHON_FILES`] of them and
/// [`MAX_DEPTH`] directories down, each with its lines: where kernels
/// compiled at run time keep their source strings.
pub fn python_sources(root: &Path) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    if refused_root(root).is_some() {
        return out;
    }
    let Ok(real_root) = root.canonicalize() else {
        return out;
    };
    let mut dirs = vec![(real_root.clone(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with('.')
                || matches!(
                    name.as_str(),
                    "site-packages" | "venv" | "node_modules" | "target" | "__pycache__"
                )
            {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() && depth < MAX_DEPTH {
                dirs.push((path, depth + 1));
            } else if kind.is_file() && name.ends_with(".py") && out.len() < MAX_PYTHON_FILES {
                let file = path.to_string_lossy().to_string();
                if let Some(lines) =
                    beneath(&[&real_root], &file).and_then(|rel| read_lines(&real_root, &rel))
                {
                    out.push((file, lines));
                }
            }
        }
    }
    out.sort();
    out
}

/// The most Python files searched for a run-time kernel's source.
const MAX_PYTHON_FILES: usize = 2000;
/// How deep under the root they are searched for.
const MAX_DEPTH: usize = 8;

fn around(lines: &[String], line: u32) -> Option<Snippet> {
    let index = usize::try_from(line).ok()?.checked_sub(1)?;
    if index >= lines.len() {
        // The file changed since the run: better no snippet than a wrong one.
        return None;
    }
    let first = index.saturating_sub(CONTEXT as usize);
    let last = (index + CONTEXT as usize).min(lines.len() - 1);
    Some(Snippet {
        first_line: first as u32 + 1,
        lines: lines[first..=last].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudawatch_model::{FindingKind, Severity, SourceLocation, Tool};
    use cudawatch_parsers::site::new_site;

    fn report_at(file: &str, line: u32) -> Report {
        let mut report = Report::new("t");
        let mut site = new_site(
            Tool::Memcheck,
            FindingKind::InvalidAccess,
            Severity::Error,
            "m".into(),
        );
        site.location = Some(SourceLocation {
            file: file.into(),
            line,
        });
        report.findings.push(site);
        report
    }

    #[test]
    fn two_lines_either_side_are_kept_and_clipped_at_the_file_ends() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("k.cu");
        std::fs::write(&file, "a\nb\nc\nd\ne\nf\n").unwrap();
        let path = file.to_str().unwrap();
        let mut report = report_at(path, 4);
        attach(&mut report, dir.path());
        let snippet = report.findings[0].snippet.clone().unwrap();
        assert_eq!(snippet.first_line, 2);
        assert_eq!(snippet.lines, ["b", "c", "d", "e", "f"]);
        let mut first = report_at(path, 1);
        attach(&mut first, dir.path());
        assert_eq!(
            first.findings[0].snippet.as_ref().unwrap().lines,
            ["a", "b", "c"]
        );
    }

    #[test]
    fn a_missing_file_or_a_line_past_its_end_gives_no_snippet() {
        let mut missing = report_at("/nonexistent/k.cu", 3);
        attach(&mut missing, Path::new("/"));
        assert!(missing.findings[0].snippet.is_none());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("k.cu");
        std::fs::write(&file, "a\n").unwrap();
        let mut past = report_at(file.to_str().unwrap(), 9);
        attach(&mut past, dir.path());
        assert!(past.findings[0].snippet.is_none());
    }

    #[test]
    fn only_regular_files_under_the_root_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("src");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("k.cu"), "a\nb\n").unwrap();
        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "token=hunter2\n").unwrap();
        std::os::unix::fs::symlink(&secret, root.join("link.cu")).unwrap();
        for (file, readable) in [
            ("k.cu".to_string(), true),
            (root.join("k.cu").display().to_string(), true),
            ("../secret.txt".to_string(), false),
            (secret.display().to_string(), false),
            ("link.cu".to_string(), false),
            ("/proc/self/environ".to_string(), false),
            ("/etc/passwd".to_string(), false),
        ] {
            let mut report = report_at(&file, 1);
            attach(&mut report, &root);
            assert_eq!(report.findings[0].snippet.is_some(), readable, "{file}");
        }
        // Even with the whole machine as the root, kernel files stay unread.
        let mut environ = report_at("/proc/self/environ", 1);
        attach(&mut environ, Path::new("/"));
        assert!(environ.findings[0].snippet.is_none());
    }
}
