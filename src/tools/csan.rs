//! PyTorch's CUDA sanitizer (CSAN): how the csan stage runs the program.
//! The program runs as it does for real (streams overlap only without
//! `CUDA_LAUNCH_BLOCKING`), with `TORCH_CUDA_SANITIZER=1`, and cudawatch's
//! Python hook (`hook/sitecustomize.py`) first on `PYTHONPATH`, to say at
//! exit whether torch was imported and CSAN was really on (CSAN prints
//! nothing when it finds nothing). Pure: the run writes the hook.

use std::path::{Path, PathBuf};

/// cudawatch's Python startup hook, compiled in; `docs/pytorch.md`.
pub const HOOK_SITECUSTOMIZE: &str = include_str!("hook/sitecustomize.py");

/// The folder of the run directory the hook is written to.
pub fn hook_dir(run_dir: &Path) -> PathBuf {
    run_dir.join("hook")
}

/// Why the stage does not apply, decided before running: CSAN watches
/// PyTorch's tensors, so only a Python program can have any.
pub fn not_applicable(python: bool) -> Option<String> {
    (!python).then(|| {
        "not applicable: CSAN watches PyTorch's tensors, and this is not a Python program".into()
    })
}

/// The variables to set and to remove for the stage whose folder is
/// `stage_dir`, given the user's `PYTHONPATH`.
pub fn env(
    run_dir: &Path,
    stage_dir: &Path,
    pythonpath: Option<String>,
) -> (Vec<(String, String)>, Vec<String>) {
    let hook = hook_dir(run_dir).display().to_string();
    let path = match pythonpath {
        Some(old) if !old.is_empty() => format!("{hook}:{old}"),
        _ => hook,
    };
    (
        vec![
            ("TORCH_CUDA_SANITIZER".into(), "1".into()),
            ("CUDAWATCH_HOOK_OUT".into(), stage_dir.display().to_string()),
            ("PYTHONPATH".into(), path),
        ],
        vec!["CUDA_LAUNCH_BLOCKING".into()],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_goes_first_on_the_users_pythonpath() {
        let (set, remove) = env(Path::new("/r"), Path::new("/r/csan"), Some("/site".into()));
        assert!(set.contains(&("PYTHONPATH".into(), "/r/hook:/site".into())));
        assert!(set.contains(&("CUDAWATCH_HOOK_OUT".into(), "/r/csan".into())));
        assert_eq!(remove, ["CUDA_LAUNCH_BLOCKING"]);
        let (set, _) = env(Path::new("/r"), Path::new("/r/csan"), None);
        assert!(set.contains(&("PYTHONPATH".into(), "/r/hook".into())));
    }
}
