//! Source snippets for findings: read from disk once, where the report is
//! made, and kept in the report, so every format (and a report rendered
//! later on a machine without the sources) shows the same lines.
//!
//! The file names come from tool output, which may be someone else's: only
//! regular files under the source root (the working directory, or
//! `--source-root`) are read, never `/proc`, `/sys` or `/dev`, and never
//! through a symlink out of the root. A received JSON report is rendered
//! with the snippets it carries; nothing is read for it.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use cudawatch_model::{Report, Snippet};

/// Lines shown either side of a finding's line.
const CONTEXT: u32 = 2;
/// Source files larger than this are not read (generated code, not the user's).
const MAX_FILE_BYTES: u64 = 8 << 20;
/// Longer lines are cut, so a minified line cannot flood a report.
const MAX_LINE_CHARS: usize = 240;

/// Fills in the snippet of every site that has a location and no snippet
/// yet, from files under `root`; files that cannot be read, or lie
/// elsewhere, leave the site without one.
pub fn attach(report: &mut Report, root: &Path) {
    let Ok(root) = root.canonicalize() else {
        return;
    };
    let mut files: HashMap<String, Option<Vec<String>>> = HashMap::new();
    for site in &mut report.findings {
        let Some(location) = &site.location else {
            continue;
        };
        if site.snippet.is_some() || location.line == 0 {
            continue;
        }
        let lines = files
            .entry(location.file.clone())
            .or_insert_with(|| resolve(&root, &location.file).and_then(|p| read_lines(&p)));
        if let Some(lines) = lines {
            site.snippet = around(lines, location.line);
        }
    }
}

/// The file a tool named, if it is a regular file under `root` (after
/// symlinks are resolved) and not in a kernel filesystem.
fn resolve(root: &Path, file: &str) -> Option<PathBuf> {
    let named = Path::new(file);
    let path = if named.is_absolute() {
        named.to_path_buf()
    } else {
        root.join(named)
    };
    let real = path.canonicalize().ok()?;
    let kernel_fs = ["/proc", "/sys", "/dev"]
        .iter()
        .any(|d| real.starts_with(d));
    (real.starts_with(root) && !kernel_fs).then_some(real)
}

fn read_lines(path: &Path) -> Option<Vec<String>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(|l| l.chars().take(MAX_LINE_CHARS).collect())
            .collect(),
    )
}

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
