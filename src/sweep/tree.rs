//! The program's tree as a resumed sweep keys a finished target by: a bug
//! can land in a file its command does not name (a sourced script, an
//! imported module, a rebuilt `.so`), so reusing a result because the
//! command and the files it names are the same would report code that was
//! not checked. In a git repository the key is its commit and what differs
//! from it (each changed tracked file's, and each untracked code file's,
//! size and time); elsewhere the code files under the working directory,
//! their sizes and times. Code, not what programs write: a log, a
//! checkpoint or a metrics file a target leaves beside its code would
//! otherwise make every resume run everything again. The sweep's own
//! folder is left out: it changes with every target that ends.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cudawatch_parsers::site::Fnv;

/// How long git may take to say what it has.
const GIT_LIMIT: Duration = Duration::from_secs(20);
/// The most files looked at outside a repository.
const MAX_FILES: usize = 20_000;

/// A key of the tree `workdir` is in, leaving `exclude` out; `None` when
/// nothing could be read.
pub fn key(workdir: &Path, exclude: &Path) -> Option<String> {
    let mut hash = Fnv::default();
    match git_state(workdir) {
        Some((top, head, status)) => {
            hash.write(head.as_bytes());
            for path in status.split('\0').filter(|e| e.len() > 3) {
                // `XY path`: the change and the file, each stamped; of the
                // untracked (`??`), code only.
                if path.starts_with("??") && !is_code(Path::new(&path[3..])) {
                    continue;
                }
                hash.write(path.as_bytes());
                let file = top.join(&path[3..]);
                if !file.starts_with(exclude) {
                    stamp(&mut hash, &file);
                }
            }
        }
        None => walk(workdir, exclude, &mut hash, &mut 0)?,
    }
    Some(format!("{:016x}", hash.finish()))
}

/// The repository's top, its commit and `git status -z`, when `workdir`
/// is in one.
fn git_state(workdir: &Path) -> Option<(PathBuf, String, String)> {
    let git = crate::executables::on_path("git")?;
    let ask = |args: &[&str]| {
        let mut all = vec!["-C".as_ref(), workdir.as_os_str()];
        all.extend(args.iter().map(|a| std::ffi::OsStr::new(*a)));
        crate::supervisor::bounded::capture(&git, &all, &[], GIT_LIMIT)
            .filter(|ran| ran.succeeded())
            .map(|ran| ran.stdout)
    };
    let head = ask(&["rev-parse", "--show-toplevel", "HEAD"])?;
    let mut lines = head.lines();
    let top = PathBuf::from(lines.next()?.trim());
    let commit = lines.next()?.trim().to_string();
    let status = ask(&["status", "--porcelain=v1", "-z", "--untracked-files=all"])?;
    Some((top, commit, status))
}

/// Whether a file is code a program runs or loads (by its ending), not
/// what it writes.
fn is_code(path: &Path) -> bool {
    const CODE: [&str; 19] = [
        "py", "pyx", "pxd", "sh", "bash", "cu", "cuh", "c", "cc", "cpp", "cxx", "h", "hpp", "so",
        "ptx", "cubin", "fatbin", "toml", "yaml",
    ];
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| CODE.contains(&e) || e == "yml")
}

/// A file's size and modification time into the key.
fn stamp(hash: &mut Fnv, file: &Path) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(meta) = std::fs::symlink_metadata(file) {
        hash.write(&meta.size().to_le_bytes());
        hash.write(&meta.mtime().to_le_bytes());
        hash.write(&meta.mtime_nsec().to_le_bytes());
    }
}

/// Every file under `dir` (hidden folders, run folders and `exclude`
/// left out) into the key, in name order; `None` past [`MAX_FILES`].
fn walk(dir: &Path, exclude: &Path, hash: &mut Fnv, seen: &mut usize) -> Option<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let skipped = name
            .as_deref()
            .is_some_and(|n| n.starts_with('.') || n == "cudawatch-runs" || n == "__pycache__");
        if skipped || path.starts_with(exclude) {
            continue;
        }
        *seen += 1;
        if *seen > MAX_FILES {
            return None;
        }
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if is_dir {
            walk(&path, exclude, hash, seen)?;
        } else if is_code(&path) {
            hash.write(path.as_os_str().as_encoded_bytes());
            stamp(hash, &path);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_the_command_does_not_name_changes_the_key_and_the_sweeps_own_folder_does_not() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        std::fs::create_dir_all(project.join("lib")).unwrap();
        std::fs::write(project.join("run.sh"), "python3 lib/model.py\n").unwrap();
        std::fs::write(project.join("lib/model.py"), "x = 1\n").unwrap();
        let sweep = project.join("sweeps/tonight");
        std::fs::create_dir_all(&sweep).unwrap();
        let before = key(&project, &sweep).unwrap();
        std::fs::write(sweep.join("target.json"), "{}").unwrap();
        assert_eq!(
            key(&project, &sweep).unwrap(),
            before,
            "the sweep's own files"
        );
        // What a target writes beside its code: a log, a checkpoint.
        std::fs::write(project.join("train.log"), "step 1\n").unwrap();
        std::fs::write(project.join("model.pt"), "weights").unwrap();
        assert_eq!(key(&project, &sweep).unwrap(), before, "a target's output");
        // The imported module, not named by the command, changed.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(project.join("lib/model.py"), "x = 2  # the bug\n").unwrap();
        assert_ne!(key(&project, &sweep).unwrap(), before);
    }
}
