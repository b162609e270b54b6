//! Python programs: recognised by interpreter or script, and PyTorch's
//! caching allocator turned off under the sanitizers (it hides
//! out-of-bounds accesses inside its blocks).

use std::ffi::OsString;
use std::path::Path;

/// Whether the program is a Python process.
pub fn is_python(program: &[OsString]) -> bool {
    let Some(first) = program.first() else {
        return false;
    };
    let base = Path::new(first)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    [
        "python",
        "pytest",
        "torchrun",
        "accelerate",
        "deepspeed",
        "ipython",
    ]
    .iter()
    .any(|p| base.starts_with(p))
        || base.ends_with(".py")
        || program
            .get(1)
            .is_some_and(|a| a.to_string_lossy().ends_with(".py"))
}

/// The variables to set and remove so that PyTorch allocates each tensor
/// with its own cudaMalloc, given the user's `PYTORCH_CUDA_ALLOC_CONF`.
/// Expandable segments cause false out-of-bounds reports (pytorch#196209),
/// so only that option is dropped from the user's configuration.
pub fn allocator_off(alloc_conf: Option<String>) -> (Vec<(String, String)>, Vec<String>) {
    let mut set = vec![(
        "PYTORCH_NO_CUDA_MEMORY_CACHING".to_string(),
        "1".to_string(),
    )];
    let mut remove = Vec::new();
    if let Some(conf) = alloc_conf.filter(|c| c.contains("expandable_segments")) {
        let kept: Vec<&str> = conf
            .split(',')
            .filter(|o| !o.trim().starts_with("expandable_segments"))
            .collect();
        if kept.is_empty() {
            remove.push("PYTORCH_CUDA_ALLOC_CONF".to_string());
        } else {
            set.push(("PYTORCH_CUDA_ALLOC_CONF".to_string(), kept.join(",")));
        }
    }
    (set, remove)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_programs_are_recognised_by_interpreter_or_script() {
        let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(is_python(&os(&["python3", "train.py"])));
        assert!(is_python(&os(&["/usr/bin/python3.12", "-m", "pytest"])));
        assert!(is_python(&os(&["./train.py"])));
        assert!(!is_python(&os(&["./oob_write"])));
    }

    #[test]
    fn only_expandable_segments_is_dropped_from_the_allocator_config() {
        let (set, remove) =
            allocator_off(Some("expandable_segments:True,max_split_size_mb:64".into()));
        assert!(remove.is_empty());
        assert!(set.contains(&(
            "PYTORCH_CUDA_ALLOC_CONF".into(),
            "max_split_size_mb:64".into()
        )));
        let (_, remove) = allocator_off(Some("expandable_segments:True".into()));
        assert_eq!(remove, ["PYTORCH_CUDA_ALLOC_CONF"]);
    }
}
