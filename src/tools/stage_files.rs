//! A stage's folder as its kind reads it: files by name, bounded and
//! regular only (`safe_files`), each name as the report shows it
//! (`memcheck/stdout`), and the files that are there but could not be read,
//! which make the stage unable to vouch (an empty artifact is not the same
//! as an unreadable one).

use std::cell::RefCell;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use cudawatch_model::Tool;

/// Bytes read from the start of a program's output stream.
pub const PROGRAM_HEAD: u64 = 32 << 20;
/// Bytes read from its end, where the error that ended it is.
pub const PROGRAM_TAIL: u64 = 96 << 20;

/// The files of one stage's folder.
pub struct StageFiles {
    dir: PathBuf,
    /// The folder as the report names it: `memcheck`, `crashed/memcheck`.
    label: String,
    unread: RefCell<Vec<String>>,
}

impl StageFiles {
    /// The folder `dir` of a stage of `tool`.
    pub fn new(dir: &Path, tool: Tool) -> StageFiles {
        StageFiles {
            dir: dir.to_path_buf(),
            label: tool.name().to_string(),
            unread: RefCell::new(Vec::new()),
        }
    }

    /// An earlier try of a stage, kept in the run directory's `folder`
    /// (`crashed/memcheck`), named so in the report.
    pub fn earlier_try(run_dir: &Path, folder: &str) -> StageFiles {
        StageFiles {
            dir: run_dir.join(folder),
            label: folder.to_string(),
            unread: RefCell::new(Vec::new()),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A file's path in the folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// What the stage's program printed, stderr then stdout (the plain
    /// run's, CSAN's, the core dump's): one text to read for errors.
    pub fn program_output(&self) -> Vec<u8> {
        let mut output = self.read_program("stderr");
        output.extend(self.read_program("stdout"));
        output
    }

    /// A stream the program printed, bounded: past [`PROGRAM_HEAD`] +
    /// [`PROGRAM_TAIL`] bytes only its first and last are read (a program
    /// that printed 3 GB made cudawatch die of its memory limit, with no
    /// report), and the stage cannot vouch for what it did not read.
    pub fn read_program(&self, name: &str) -> Vec<u8> {
        self.read_program_beside(name, None)
    }

    /// [`Self::read_program`] of a stream the program shares with a tool
    /// whose every line starts with `tool_prefix` (compute-sanitizer's
    /// `=========`): a cut part made only of the tool's lines loses
    /// nothing, as the tool's records are in its own file too, and the
    /// stage can still vouch (initcheck printed 206 MB of records on an
    /// EfficientNet's two steps, and made the stage inconclusive). A line
    /// of the program's there still keeps it from vouching.
    pub fn read_program_beside(&self, name: &str, tool_prefix: Option<&[u8]>) -> Vec<u8> {
        let path = self.dir.join(name);
        match crate::safe_files::read_ends(&path, PROGRAM_HEAD, PROGRAM_TAIL) {
            Ok((bytes, 0)) => bytes,
            Ok((bytes, cut))
                if tool_prefix.is_some_and(|p| only_tool_lines_cut(&path, &bytes, cut, p)) =>
            {
                bytes
            }
            Ok((bytes, cut)) => {
                self.unread.borrow_mut().push(format!(
                    "all of {} (the program printed {} bytes: its first {} MiB and last {} MiB \
                     were read, {cut} bytes between them not)",
                    self.rel(name),
                    cut + PROGRAM_HEAD + PROGRAM_TAIL,
                    PROGRAM_HEAD >> 20,
                    PROGRAM_TAIL >> 20
                ));
                bytes
            }
            Err(e) => {
                self.note(name, &e);
                Vec::new()
            }
        }
    }

    /// `name` as the report names it: `memcheck/memcheck.xml`.
    pub fn rel(&self, name: &str) -> String {
        format!("{}/{name}", self.label)
    }

    /// The file's bytes; empty when it is not there, and noted when it is
    /// there but cannot be read.
    pub fn read(&self, name: &str) -> Vec<u8> {
        crate::safe_files::read(&self.dir.join(name)).unwrap_or_else(|e| {
            self.note(name, &e);
            Vec::new()
        })
    }

    /// The file for streaming (a sanitizer's XML can be gigabytes).
    pub fn open(&self, name: &str) -> Option<BufReader<File>> {
        crate::safe_files::open(&self.dir.join(name))
            .map_err(|e| self.note(name, &e))
            .ok()
            .map(|f| BufReader::with_capacity(1 << 20, f))
    }

    /// The names in the folder that start with `prefix` and end with
    /// `suffix`, sorted.
    pub fn names(&self, prefix: &str, suffix: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                    .filter(|n| n.starts_with(prefix) && n.ends_with(suffix))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// A file of another stage of the same run (the sanitizers compare
    /// their stdout with the plain run's).
    pub fn sibling(&self, tool: Tool, name: &str) -> Vec<u8> {
        self.dir
            .parent()
            .map(|run| run.join(tool.name()).join(name))
            .and_then(|p| crate::safe_files::read(&p).ok())
            .unwrap_or_default()
    }

    /// The files that were there and could not be read, as the report
    /// names them, with why.
    pub fn unread(&self) -> Vec<String> {
        self.unread.borrow().clone()
    }

    fn note(&self, name: &str, error: &std::io::Error) {
        if error.kind() != std::io::ErrorKind::NotFound {
            self.unread
                .borrow_mut()
                .push(format!("{} ({error})", self.rel(name)));
        }
    }
}

/// Whether what [`crate::safe_files::read_ends`] cut from the file at
/// `path` (`cut` bytes after the first [`PROGRAM_HEAD`] of `read`) is
/// lines of the tool's (`tool_prefix`) alone: the line the cut begins in
/// too, judged by its start, which was read.
fn only_tool_lines_cut(path: &Path, read: &[u8], cut: u64, tool_prefix: &[u8]) -> bool {
    let head = &read[..(PROGRAM_HEAD as usize).min(read.len())];
    let begun = head
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(head, |end| &head[end + 1..]);
    crate::safe_files::lines_between_all_start_with(
        path,
        (PROGRAM_HEAD, PROGRAM_HEAD + cut),
        begun,
        tool_prefix,
    )
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stage's stdout of `size` bytes: the tool's lines (`line`), one
    /// program line among them at byte `program_at`, if any.
    fn stdout_of(dir: &Path, size: usize, line: &[u8], program_at: Option<usize>) -> StageFiles {
        let mut text = b"========= COMPUTE-SANITIZER\n".to_vec();
        while text.len() < size {
            if program_at.is_some_and(|at| text.len() >= at && text.len() < at + line.len()) {
                text.extend_from_slice(b"epoch 1 loss 0.25\n");
            }
            text.extend_from_slice(line);
        }
        text.extend_from_slice(b"done\n========= ERROR SUMMARY: 0 errors\n");
        std::fs::write(dir.join("stdout"), &text).unwrap();
        StageFiles::new(dir, Tool::Initcheck)
    }

    #[test]
    fn a_cut_of_the_tools_own_lines_alone_leaves_nothing_unread() {
        // Lines of four lengths (10 to 52 bytes): the cut lands at another
        // offset inside a line each time.
        let dir = tempfile::tempdir().unwrap();
        for pad in 0..4 {
            let line = format!("========={}\n", " x".repeat(pad * 7));
            let files = stdout_of(dir.path(), 130 << 20, line.as_bytes(), None);
            let read = files.read_program_beside("stdout", Some(b"========="));
            assert!(read.ends_with(b"ERROR SUMMARY: 0 errors\n"));
            assert_eq!(files.unread(), Vec::<String>::new(), "{line:?}");
            // Read as a program's own stream, it is still unread.
            files.read_program("stdout");
            assert_eq!(files.unread().len(), 1);
        }
    }

    #[test]
    fn a_program_line_in_the_cut_keeps_the_stage_from_vouching() {
        let dir = tempfile::tempdir().unwrap();
        let line = b"=========     by thread (96,0,0) in block (0,0,0)\n";
        let files = stdout_of(dir.path(), 130 << 20, line, Some(33 << 20));
        files.read_program_beside("stdout", Some(b"========="));
        assert_eq!(files.unread().len(), 1, "{:?}", files.unread());
    }
}
