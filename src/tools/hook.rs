//! cudawatch's Python startup hook (`hook/sitecustomize.py`), shared by the
//! stages that watch a Python program from inside: csan and memory. The run
//! writes it into its own `hook/` folder, never the user's tree, and these
//! stages put that folder first on `PYTHONPATH`; the contract it keeps is in
//! `docs/pytorch.md`.

use std::path::{Path, PathBuf};

/// The hook, compiled in.
pub const SITECUSTOMIZE: &str = include_str!("hook/sitecustomize.py");

/// The folder of the run directory the hook is written to.
pub fn dir(run_dir: &Path) -> PathBuf {
    run_dir.join("hook")
}

/// `PYTHONPATH` with the hook first, then the user's own entries, and the
/// stage's folder as the hook's output.
pub fn env(run_dir: &Path, stage_dir: &Path, pythonpath: Option<String>) -> Vec<(String, String)> {
    let hook = dir(run_dir).display().to_string();
    let path = match pythonpath {
        Some(old) if !old.is_empty() => format!("{hook}:{old}"),
        _ => hook,
    };
    vec![
        ("CUDAWATCH_HOOK_OUT".into(), stage_dir.display().to_string()),
        ("PYTHONPATH".into(), path),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_goes_first_on_the_users_pythonpath() {
        let set = env(Path::new("/r"), Path::new("/r/csan"), Some("/site".into()));
        assert!(set.contains(&("PYTHONPATH".into(), "/r/hook:/site".into())));
        assert!(set.contains(&("CUDAWATCH_HOOK_OUT".into(), "/r/csan".into())));
        let set = env(Path::new("/r"), Path::new("/r/csan"), None);
        assert!(set.contains(&("PYTHONPATH".into(), "/r/hook".into())));
    }
}
