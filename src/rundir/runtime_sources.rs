//! Kernels compiled at run time (CuPy's `RawKernel`, NVRTC through
//! cuda-python) are compiled from a temporary file holding the source
//! string, so the tools place their findings at `/tmp/tmpXXXX/<hash>.cubin.cu:9`,
//! a file that is gone and never the user's. The string is in the user's
//! Python: the finding is moved to the line of that file that holds the
//! same source line, when exactly one string literal in the user's source
//! defines the kernel. The temporary position is kept in `runtime_source`.

use std::path::Path;

use cudawatch_model::{Report, SourceLocation};
use cudawatch_parsers::site::simple_kernel_name;

use super::snippets::python_sources;

/// Moves every finding placed in a run-time compiled temporary file to the
/// Python line holding it, where that can be known.
pub fn map(report: &mut Report, root: &Path) {
    if !report
        .findings
        .iter()
        .any(|s| s.location.as_ref().is_some_and(|l| is_temporary(&l.file)))
    {
        return;
    }
    let sources = python_sources(root);
    for site in &mut report.findings {
        let Some(location) = site.location.clone() else {
            continue;
        };
        if !is_temporary(&location.file) {
            continue;
        }
        let Some(kernel) = site.kernel.as_deref().map(simple_kernel_name) else {
            continue;
        };
        let found: Vec<(&String, &Vec<String>, u32)> = sources
            .iter()
            .filter_map(|(file, lines)| Some((file, lines, literal_start(lines, kernel)?)))
            .collect();
        let [(file, lines, start)] = found.as_slice() else {
            continue;
        };
        let (file, start) = (*file, *start);
        let at = |line: u32| {
            let mapped = start + line - 1;
            (line > 0 && (mapped as usize) <= lines.len()).then(|| SourceLocation {
                file: file.clone(),
                line: mapped,
            })
        };
        let Some(mapped) = at(location.line) else {
            continue;
        };
        // The one-line message names positions by base name and line.
        let rename = |message: &mut String, from: &SourceLocation, to: &SourceLocation| {
            *message = message.replace(&from.short(), &to.short());
        };
        rename(&mut site.message, &location, &mapped);
        if let Some(other) = site.other.as_mut()
            && let Some(o) = other.location.clone().filter(|o| o.file == location.file)
            && let Some(to) = at(o.line)
        {
            rename(&mut site.message, &o, &to);
            other.location = Some(to);
        }
        site.runtime_source = Some(location);
        site.location = Some(mapped);
    }
}

/// A source file a run-time compiler wrote: under a temporary directory,
/// or named as CuPy names them (`<sha1>.cubin.cu`).
fn is_temporary(file: &str) -> bool {
    file.contains("/tmp/") || file.ends_with(".cubin.cu")
}

/// The line that opens the string literal defining `kernel` as a
/// `__global__` function (its line 1 is the text after the quotes), if the
/// file has exactly one such definition.
fn literal_start(lines: &[String], kernel: &str) -> Option<u32> {
    let defines = |i: usize| {
        let here = &lines[i];
        let named = here
            .find(kernel)
            .is_some_and(|at| here[at + kernel.len()..].trim_start().starts_with('('));
        let before = lines[i.saturating_sub(2)..=i]
            .iter()
            .any(|l| l.contains("__global__"));
        named && before
    };
    let definitions: Vec<usize> = (0..lines.len()).filter(|&i| defines(i)).collect();
    let [definition] = definitions.as_slice() else {
        return None;
    };
    (0..=*definition)
        .rev()
        .find(|&i| {
            let l = &lines[i];
            l.contains("'''") || l.contains("\"\"\"") || l.contains("R\"(")
        })
        .map(|i| i as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_literal_that_defines_the_kernel_is_found_and_ambiguity_is_refused() {
        let file: Vec<String> = "import cupy as cp\n\nK = cp.RawKernel(r'''\nextern \"C\" __global__\nvoid block_sum(float *x) {\n  x[0] = 1;\n}\n''', 'block_sum')\n"
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(literal_start(&file, "block_sum"), Some(3));
        assert_eq!(literal_start(&file, "other"), None);
        let twice: Vec<String> = file.iter().chain(file.iter()).cloned().collect();
        assert_eq!(literal_start(&twice, "block_sum"), None);
    }

    #[test]
    fn temporary_files_are_told_by_place_or_name() {
        assert!(is_temporary("/tmp/tmpngomv22z/1c61d1.cubin.cu"));
        assert!(is_temporary("1c61d1.cubin.cu"));
        assert!(!is_temporary("/home/u/kernels.cu"));
    }
}
