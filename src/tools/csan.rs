//! PyTorch's CUDA sanitizer (CSAN): how the csan stage runs the program.
//! The program runs as it does for real (streams overlap only without
//! `CUDA_LAUNCH_BLOCKING`), with `TORCH_CUDA_SANITIZER=1`, and cudawatch's
//! Python hook first on `PYTHONPATH`, to say at exit whether torch was
//! imported and CSAN was really on (CSAN prints nothing when it finds
//! nothing). Pure: the run writes the hook.

use std::path::Path;

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
    let mut set = vec![("TORCH_CUDA_SANITIZER".into(), "1".into())];
    set.extend(super::hook::env(run_dir, stage_dir, pythonpath));
    (set, vec!["CUDA_LAUNCH_BLOCKING".into()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csan_runs_without_launch_blocking() {
        let (set, remove) = env(Path::new("/r"), Path::new("/r/csan"), None);
        assert!(set.contains(&("TORCH_CUDA_SANITIZER".into(), "1".into())));
        assert_eq!(remove, ["CUDA_LAUNCH_BLOCKING"]);
    }
}
