//! Finding programs: one rule for every search cudawatch makes (the
//! target, the tools, nvidia-smi, nvcc, python3, a sweep target's checksum).
//! A name is looked up in PATH's directories in order, and the first
//! regular file someone may execute wins: a non-executable file of the same
//! name earlier on PATH is passed over, as a shell does.

use std::path::{Path, PathBuf};

/// A regular file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` in PATH's directories, then in `extra` ones, by the rule above.
pub fn find_in_path(name: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(extra.iter().cloned());
    dirs.into_iter()
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// `name` on PATH.
pub fn on_path(name: &str) -> Option<PathBuf> {
    find_in_path(name, &[])
}

/// A program as a user names it (`python3`, `./venv/bin/python`, `$CXX`):
/// a path is taken as it is, a bare name looked up on PATH, as a shell does.
pub fn resolve(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        Some(program.to_path_buf())
    } else {
        on_path(program.to_str()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_the_execute_bit_is_passed_over() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = std::env::temp_dir().join(format!("cw-exe-{}", std::process::id()));
        let (first, second) = (tmp.join("a"), tmp.join("b"));
        std::fs::create_dir_all(&first).unwrap();
        std::fs::create_dir_all(&second).unwrap();
        std::fs::write(first.join("tool"), "").unwrap();
        std::fs::write(second.join("tool"), "").unwrap();
        std::fs::set_permissions(second.join("tool"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        assert!(!is_executable(&first.join("tool")));
        let found = std::env::split_paths(&std::env::join_paths([&first, &second]).unwrap())
            .map(|d| d.join("tool"))
            .find(|p| is_executable(p));
        assert_eq!(found, Some(second.join("tool")));
        assert_eq!(
            find_in_path("tool", &[first.clone(), second.clone()]).filter(|p| p.starts_with(&tmp)),
            Some(second.join("tool"))
        );
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
