//! Python programs, recognised by interpreter or script, also behind the
//! wrappers users put in front of them (`env`, `nice`, `timeout`, `uv
//! run`, `conda run`: `plan::launcher::unwrapped`), inside a shell's `-c`
//! command, and in a shell script the command runs (`bash train.sh`,
//! `./train.sh`), read for the words that start Python.

use std::ffi::OsString;
use std::path::Path;

/// Names that start a Python process (or a launcher of them).
const PYTHON_STARTERS: [&str; 6] = [
    "python",
    "pytest",
    "torchrun",
    "accelerate",
    "deepspeed",
    "ipython",
];

/// Shells whose `-c` command or script is read for a Python program.
const SHELLS: [&str; 5] = ["sh", "bash", "dash", "zsh", "ksh"];

/// How much of a shell script is read: a launch script is short.
const SCRIPT_BYTES: u64 = 64 * 1024;

/// Whether the program is a Python process, or a command that starts one.
pub fn is_python(program: &[OsString]) -> bool {
    let words = super::launcher::unwrapped(program);
    let Some(first) = words.first() else {
        return false;
    };
    let base = super::launcher::base(first);
    if PYTHON_STARTERS.iter().any(|p| base.starts_with(p))
        || base.ends_with(".py")
        || words.get(1).is_some_and(|a| a.ends_with(".py"))
    {
        return true;
    }
    if SHELLS.contains(&base.as_str()) {
        return match words.iter().position(|w| w == "-c") {
            Some(c) => words.get(c + 1).is_some_and(|cmd| starts_python(cmd)),
            None => words
                .iter()
                .skip(1)
                .find(|w| !w.starts_with('-'))
                .is_some_and(|script| script_starts_python(Path::new(script))),
        };
    }
    // `./train.sh`: a script run by its own `#!` line.
    base.ends_with(".sh") && script_starts_python(Path::new(first))
}

/// The Python interpreter the program runs under, as far as its command
/// line says: the program's own `python3.12` or `.venv/bin/python`, else
/// `python3` (a script, `torchrun`, `pytest` start the one on PATH).
pub fn interpreter(program: &[OsString]) -> std::path::PathBuf {
    let words = super::launcher::unwrapped(program);
    words
        .first()
        .filter(|first| super::launcher::base(first).starts_with("python"))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "python3".into())
}

/// Whether a shell command line runs a Python program in one of its
/// commands (`cd src && python3 train.py`, `exec torchrun ...`).
fn starts_python(command: &str) -> bool {
    command
        .split(['\n', ';', '&', '|', '(', ')', '`'])
        .filter_map(shlex::split)
        .any(|words| {
            let words: Vec<OsString> = words
                .into_iter()
                .skip_while(|w| w == "exec" || w == "then" || w == "do")
                .map(OsString::from)
                .collect();
            !words.is_empty() && is_python_command(&words)
        })
}

/// One simple command of a shell line: Python behind its wrappers.
fn is_python_command(words: &[OsString]) -> bool {
    let unwrapped = super::launcher::unwrapped(words);
    unwrapped.first().is_some_and(|first| {
        let base = super::launcher::base(first);
        PYTHON_STARTERS.iter().any(|p| base.starts_with(p)) || base.ends_with(".py")
    })
}

/// Whether a shell script's lines start a Python program (its first
/// 64 KiB; a script that cannot be read is not one).
fn script_starts_python(script: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(script) else {
        return false;
    };
    let mut text = String::new();
    if file.take(SCRIPT_BYTES).read_to_string(&mut text).is_err() {
        return false;
    }
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .any(starts_python)
}

#[cfg(test)]
mod tests {
    use super::super::launcher::tests::os;
    use super::*;

    #[test]
    fn the_interpreter_is_the_programs_own_python_or_python3() {
        let of = |argv: &[&str]| interpreter(&os(argv)).display().to_string();
        assert_eq!(of(&[".venv/bin/python", "train.py"]), ".venv/bin/python");
        assert_eq!(
            of(&["env", "A=1", "python3.12", "-m", "pytest"]),
            "python3.12"
        );
        assert_eq!(
            of(&["torchrun", "--nproc-per-node", "2", "train.py"]),
            "python3"
        );
        assert_eq!(of(&["./oob_write"]), "python3");
    }

    #[test]
    fn python_programs_are_recognised_by_interpreter_or_script() {
        assert!(is_python(&os(&["python3", "train.py"])));
        assert!(is_python(&os(&["/usr/bin/python3.12", "-m", "pytest"])));
        assert!(is_python(&os(&["./train.py"])));
        assert!(!is_python(&os(&["./oob_write"])));
    }

    #[test]
    fn wrappers_and_shells_in_front_of_python_are_seen_through() {
        for argv in [
            &["env", "CUDA_VISIBLE_DEVICES=0", "python3", "x.py"][..],
            &["nice", "-n", "10", "python3", "x.py"],
            &["timeout", "60", "python3", "x.py"],
            &["uv", "run", "python", "x.py"],
            &["sh", "-c", "python3 x.py"],
            &[
                "bash",
                "-c",
                "cd src && exec torchrun --nproc_per_node=2 x.py",
            ],
        ] {
            assert!(is_python(&os(argv)), "{argv:?}");
        }
        assert!(!is_python(&os(&["sh", "-c", "./oob_write && echo done"])));
        assert!(!is_python(&os(&["env", "A=1", "./oob_write"])));
    }

    #[test]
    fn a_shell_script_that_starts_python_is_a_python_program() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("train.sh");
        std::fs::write(&script, "#!/bin/bash\nset -e\n# python is mentioned here only\nexport X=1\npython3 train.py --lr 3e-4\n").unwrap();
        let native = dir.path().join("native.sh");
        std::fs::write(&native, "#!/bin/bash\n# not python\n./oob_write\n").unwrap();
        let s = script.to_string_lossy().into_owned();
        assert!(is_python(&os(&["bash", &s])));
        assert!(is_python(&os(&[&s])));
        assert!(!is_python(&os(&["bash", &native.to_string_lossy()])));
    }
}
