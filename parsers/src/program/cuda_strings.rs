//! CUDA 13's error table as the program prints it: every
//! `cudaGetErrorString()` text with its `cudaError` name and code, and the
//! driver API's `CUDA_ERROR_*` names (`cuGetErrorName`) with theirs, read
//! from the table captured on the GPU machine
//! (`sample-reports/error-tables/error-strings.tsv`, the one the
//! knowledge crate explains codes from).
//!
//! The most common error macro of C and CUDA code prints only `file:line`
//! and the string (`error_macro.cu:42 an illegal memory access was
//! encountered`, sample-reports/outside/error_macro/), so a string alone
//! must be recognised; but many strings are ordinary words ("invalid
//! argument", "not ready"). A line names an error by its string when the
//! string ends the line and the line says it is CUDA's: the string is
//! distinctive (four words or more: no program says "an illegal memory
//! access was encountered" of anything else), or the line holds a source
//! position or the word CUDA.

use std::sync::OnceLock;

/// The table, compiled in.
const TABLE: &str = include_str!("../../../sample-reports/error-tables/error-strings.tsv");

/// One error of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaError {
    /// `cudaErrorIllegalAddress`, or `CUDA_ERROR_ILLEGAL_ADDRESS`.
    pub name: String,
    /// Its code.
    pub code: i64,
    /// What the library's string function says.
    pub text: String,
}

/// The runtime's errors (`cudaError`), then the driver's (`CUresult`).
fn table() -> &'static (Vec<CudaError>, Vec<CudaError>) {
    static TABLES: OnceLock<(Vec<CudaError>, Vec<CudaError>)> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut runtime = Vec::new();
        let mut driver = Vec::new();
        for line in TABLE.lines().filter(|l| !l.starts_with('#')) {
            let mut fields = line.splitn(4, '\t');
            let (Some(kind), Some(code), Some(name), Some(text)) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let (Ok(code), text) = (code.parse::<i64>(), text.trim()) else {
                continue;
            };
            // "no error" is no error.
            if code == 0 || text.is_empty() {
                continue;
            }
            let error = CudaError {
                name: name.to_string(),
                code,
                text: text.to_string(),
            };
            match kind {
                "cudaError" => runtime.push(error),
                "CUresult" => driver.push(error),
                _ => {}
            }
        }
        // Longest first: "invalid device ordinal" before "invalid device".
        runtime.sort_by_key(|e| std::cmp::Reverse(e.text.len()));
        (runtime, driver)
    })
}

/// Strings too common to find an error by alone: "out of memory" is also
/// PyTorch's own allocator's words (its OOM is read apart), "invalid
/// argument" anybody's. A line names them by `cudaErrorX` only.
const NAMED_ONLY: [&str; 2] = ["out of memory", "invalid argument"];

/// The runtime error whose string ends `line`, when the line says it is
/// CUDA's (see the module's text).
pub fn by_string(line: &str) -> Option<&'static CudaError> {
    by_any_string(line).filter(|e| !NAMED_ONLY.contains(&e.text.as_str()))
}

fn by_any_string(line: &str) -> Option<&'static CudaError> {
    // PyTorch's and the usual CHECK macros' words: the string anywhere.
    if (line.contains("CUDA error") || line.contains("error:"))
        && let Some(error) = table().0.iter().find(|e| line.contains(e.text.as_str()))
    {
        return Some(error);
    }
    let whole = line.trim_end();
    let trimmed = whole.trim_end_matches(['.', '!', ')', '"', '\'']);
    let ends = |text: &str, with: &str| {
        with.ends_with(text)
            && with[..with.len() - text.len()]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
    };
    let error = table()
        .0
        .iter()
        .find(|e| ends(&e.text, whole) || ends(&e.text, trimmed))?;
    let distinctive = error.text.split_whitespace().count() >= 4;
    let said_cuda =
        line.contains("CUDA") || line.contains("cuda") || source_position(line).is_some();
    (distinctive || said_cuda).then_some(error)
}

/// The runtime error of that name (`cudaErrorIllegalAddress`).
pub fn by_name(name: &str) -> Option<&'static CudaError> {
    table().0.iter().find(|e| e.name == name)
}

/// Each driver API error a line names (`CUDA_ERROR_ILLEGAL_ADDRESS`), as
/// the runtime error of the same code and string where there is one (what
/// the rest of cudawatch knows errors by), else as itself.
pub fn driver_names(line: &str) -> Vec<&'static CudaError> {
    if !line.contains("CUDA_ERROR_") {
        return Vec::new();
    }
    let (runtime, driver) = table();
    let mut out: Vec<&CudaError> = Vec::new();
    for token in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if !token.starts_with("CUDA_ERROR_") {
            continue;
        }
        let Some(error) = driver.iter().find(|e| e.name == token) else {
            continue;
        };
        let same = runtime
            .iter()
            .find(|r| r.code == error.code && r.text == error.text)
            .unwrap_or(error);
        if !out.contains(&same) {
            out.push(same);
        }
    }
    out
}

/// The first `file.cu:42` in a line: a source file of a language that
/// calls CUDA, and its line (a trailing colon, as compilers print it, is
/// not part of it).
pub fn source_position(line: &str) -> Option<(String, u32)> {
    // Not Python's: a traceback says where a Python program was, and a
    // `file.py:31:` in pytest's one-line report is where the error
    // surfaced, often a later test's line.
    const SOURCES: [&str; 9] = [
        ".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".f90",
    ];
    line.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | ','))
        .find_map(|word| {
            let word = word.trim_end_matches(':');
            let (file, number) = word.rsplit_once(':')?;
            let number: u32 = number.parse().ok()?;
            SOURCES
                .iter()
                .any(|s| file.ends_with(s))
                .then(|| (file.to_string(), number))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_macros_own_line_names_its_error_and_place() {
        let line = "/work/main/tests/gpu/outside/error_macro.cu:42 an illegal memory access was encountered";
        assert_eq!(by_string(line).unwrap().name, "cudaErrorIllegalAddress");
        assert_eq!(
            source_position(line),
            Some(("/work/main/tests/gpu/outside/error_macro.cu".into(), 42))
        );
        // A distinctive string alone, as a program's own printf says it.
        assert_eq!(
            by_string("walk: an illegal memory access was encountered")
                .unwrap()
                .code,
            700
        );
        // Every string of the table, after a position.
        for e in table()
            .0
            .iter()
            .filter(|e| !NAMED_ONLY.contains(&e.text.as_str()))
        {
            let line = format!("kern.cu:7 {}", e.text);
            assert_eq!(by_string(&line).map(|f| &f.text), Some(&e.text), "{line}");
        }
    }

    #[test]
    fn ordinary_words_are_no_cuda_error_without_cuda_around_them() {
        for line in [
            "parse_args: invalid argument",
            "cache: not ready",
            "loading checkpoint: file not found",
            "viewer: an illegal memory access was encountered in the log",
        ] {
            assert_eq!(by_string(line), None, "{line}");
        }
        assert_eq!(
            by_string("CUDA failure: misaligned address").unwrap().code,
            716
        );
        assert_eq!(
            by_string("train.cu:3: invalid device ordinal")
                .unwrap()
                .code,
            101
        );
        // Named only by cudaErrorX: PyTorch's allocator says "out of memory".
        assert_eq!(by_string("CUDA error: out of memory"), None);
    }

    #[test]
    fn driver_names_are_read_as_the_runtime_error_of_the_same_code() {
        let found = driver_names("cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "cudaErrorIllegalAddress");
        assert!(driver_names("CUDA_ERROR_NOT_A_NAME").is_empty());
    }
}
