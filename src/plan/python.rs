//! Python programs, recognised by interpreter or script.

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
}
