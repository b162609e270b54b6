//! A compute-sanitizer installed from PyPI (`pip install
//! nvidia-cuda-sanitizer-api`) in the Python the program runs under, found
//! for the racecheck and synccheck stages: 2026.4 and newer leave library
//! kernels out of them (`tools::sanitizer::launches`), which takes a
//! ResNet-18 training step's racecheck from 117 s to 16 s and ViT-tiny's
//! synccheck from a flood to 10 s on an H200, where the toolkit's 2025.3.1
//! cannot. The toolkit's compute-sanitizer keeps every other stage:
//! 2026.4's memcheck ends every cuDNN program inconclusive (docs/speed.md).

use std::path::{Path, PathBuf};

use crate::supervisor::bounded;
use crate::tools::lookup::release;
use crate::tools::sanitizer::LIBRARY_FILTER_SINCE;

/// Where the wheel puts its executable, under a `sys.path` folder.
pub const IN_SITE_PACKAGES: &str = "nvidia/cu13/compute-sanitizer/compute-sanitizer";

/// What the program's Python is asked: its import path, one folder a line.
const SYS_PATH: &str = "import sys; print('\\n'.join(p for p in sys.path if p))";

/// The compute-sanitizer of the stages that leave library kernels out,
/// when the program's Python (`python`) has one from PyPI that can and the
/// toolkit's (`toolkit_version`) cannot: its path and release.
pub fn for_library_filter(
    python: &Path,
    toolkit_version: Option<&str>,
) -> Option<(PathBuf, String)> {
    if toolkit_version
        .and_then(release)
        .is_some_and(|r| r >= LIBRARY_FILTER_SINCE)
    {
        return None;
    }
    let found = installed(python)?;
    let version = super::tool_version(&found)?;
    newer_enough(&version).then_some((found, version))
}

/// Whether a release leaves library kernels out of racecheck and synccheck.
fn newer_enough(version: &str) -> bool {
    release(version).is_some_and(|r| r >= LIBRARY_FILTER_SINCE)
}

/// The PyPI compute-sanitizer in `python`'s import path, if any, of
/// whatever release: a bare name is looked up on PATH.
pub fn installed(python: &Path) -> Option<PathBuf> {
    let python = crate::executables::resolve(python)?;
    let ran = bounded::capture(
        &python,
        &["-c", SYS_PATH],
        &[],
        bounded::limit(super::QUICK),
    )?;
    if ran.timed_out || ran.code != Some(0) {
        return None;
    }
    first_installed(ran.output.lines().map(Path::new))
}

/// The first of the import path's folders that holds the wheel's executable.
fn first_installed<'a>(folders: impl Iterator<Item = &'a Path>) -> Option<PathBuf> {
    folders
        .filter(|f| f.is_absolute())
        .map(|f| f.join(IN_SITE_PACKAGES))
        .find(|p| crate::executables::is_executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_releases_that_leave_library_kernels_out_are_taken() {
        assert!(newer_enough("2026.4.0.0"));
        assert!(newer_enough("2027.1.0.0"));
        assert!(!newer_enough("2025.3.1.0"));
        assert!(!newer_enough("2026.3.0.0"));
        assert!(!newer_enough("version"));
    }

    #[test]
    fn a_toolkit_that_already_leaves_them_out_is_kept() {
        assert_eq!(
            for_library_filter(Path::new("python3"), Some("2026.4.0.0")),
            None
        );
    }

    #[test]
    fn the_executable_is_found_in_the_first_folder_that_has_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (empty, site, later) = (
            dir.path().join("empty"),
            dir.path().join("site"),
            dir.path().join("later"),
        );
        for folder in [&site, &later] {
            let exe = folder.join(IN_SITE_PACKAGES);
            std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
            std::fs::write(&exe, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(&empty).unwrap();
        let folders = [Path::new("relative"), &empty, &site, &later];
        assert_eq!(
            first_installed(folders.into_iter()),
            Some(site.join(IN_SITE_PACKAGES))
        );
        assert_eq!(first_installed([empty.as_path()].into_iter()), None);
    }
}
