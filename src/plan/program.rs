//! Whether a program can be started, checked once before anything runs:
//! six stages (or a night of sweeps) of "no such file" would say the same
//! thing six times.

use std::ffi::OsString;
use std::path::Path;

use crate::errors::ExpectedError;

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
        return Err(ExpectedError::ProgramNotFound(format!(
            "cannot run `{shown}`: {}",
            if shown.contains('/') {
                "no executable file there"
            } else {
                "no executable of that name on PATH"
            }
        )));
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
