//! Whether a program can be started, checked once before anything runs:
//! six stages (or a night of sweeps) of "no such file" would say the same
//! thing six times.

use std::ffi::OsString;
use std::path::Path;

use crate::errors::ExpectedError;

/// The interpreter a script without a `#!` line needs (`python3` for a
/// `.py` file, `bash` for a `.sh` one), when `path` is such a script; a
/// compiled program starts with its ELF header and is not one.
fn without_interpreter_line(path: &Path) -> Option<&'static str> {
    let name = path.to_string_lossy();
    let interpreter = if name.ends_with(".py") {
        "python3"
    } else if name.ends_with(".sh") {
        "bash"
    } else {
        return None;
    };
    let mut head = [0u8; 2];
    let n = std::io::Read::read(&mut std::fs::File::open(path).ok()?, &mut head).ok()?;
    (head[..n] != *b"#!").then_some(interpreter)
}

/// Checks that the program can be started from `workdir` (and, for
/// `python script.py`, that the script is there).
pub fn check(program: &[OsString], workdir: &Path) -> Result<(), ExpectedError> {
    let Some(first) = program.first() else {
        return Err(ExpectedError::NoProgram);
    };
    let shown = first.to_string_lossy();
    let path = Path::new(first);
    let found = if shown.contains('/') {
        crate::executables::is_executable(&workdir.join(path))
    } else {
        crate::executables::on_path(&shown).is_some()
    };
    if !found {
        let there = workdir.join(path);
        let why = if !shown.contains('/') && there.is_file() {
            // `cudawatch run -- train.py`: a file here, looked for on PATH.
            let interpreter = if shown.ends_with(".py") {
                "python3 "
            } else if shown.ends_with(".sh") {
                "bash "
            } else {
                "./"
            };
            format!(
                "no executable of that name on PATH, but {shown} is here: cudawatch run -- \
                 {interpreter}{shown}"
            )
        } else if !shown.contains('/') {
            "no executable of that name on PATH".to_string()
        } else if there.is_file() {
            // The usual case: a script saved without its executable bit.
            let interpreter = if shown.ends_with(".py") {
                format!(" or run it with python3: cudawatch run -- python3 {shown}")
            } else if shown.ends_with(".sh") {
                format!(" or run it with bash: cudawatch run -- bash {shown}")
            } else {
                String::new()
            };
            format!("not executable: chmod +x {shown}{interpreter}")
        } else if there.is_dir() {
            "a directory, not a program".to_string()
        } else {
            "no such file".to_string()
        };
        return Err(ExpectedError::ProgramNotFound(format!(
            "cannot run `{shown}`: {why}"
        )));
    }
    // An executable script with no `#!` line is run by the shell: a
    // Python script then fails with the shell's `import: command not
    // found`, nothing that says why.
    if shown.contains('/') || workdir.join(path).is_file() {
        let there = workdir.join(path);
        if let Some(interpreter) = without_interpreter_line(&there) {
            return Err(ExpectedError::ProgramNotFound(format!(
                "cannot run `{shown}` as it is: it has no #! line, so the shell would read it; \
                 run it with {interpreter} (cudawatch run -- {interpreter} {shown}) or add \
                 `#!/usr/bin/env {interpreter}` as its first line"
            )));
        }
    }
    if super::is_python(program)
        && let Some(script) = program
            .get(1)
            .filter(|a| a.to_string_lossy().ends_with(".py"))
        && !workdir.join(script).is_file()
    {
        return Err(ExpectedError::ProgramNotFound(format!(
            "cannot run `{shown} {}`: the script is not there",
            script.to_string_lossy()
        )));
    }
    Ok(())
}
