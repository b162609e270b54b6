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
        match crate::safe_files::read_ends(&self.dir.join(name), PROGRAM_HEAD, PROGRAM_TAIL) {
            Ok((bytes, 0)) => bytes,
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
