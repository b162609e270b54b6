//! Which of a report's kernels are the program's own though their names
//! are a library's: the binaries of the program define them
//! (`Report::own_kernels`, mangled names read before the stages). A tool
//! names a kernel demangled, in its own spelling (`void
//! cutlass::Kernel<TileSum>(T1::Params)`, or the bare `Kernel` of an XML
//! record), so the two are compared by the identifiers they spell: every
//! identifier of the tool's name before its parameters is one the mangled
//! name spells (`_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE`: `cutlass`,
//! `Kernel`, `TileSum`, `Params`).

/// The mangled name of `own` that `kernel` (as a tool names it) is, if any.
pub fn defining<'a>(own: &'a [String], kernel: &str) -> Option<&'a str> {
    let wanted = spelled(kernel);
    if wanted.is_empty() {
        return None;
    }
    own.iter()
        .find(|mangled| {
            let have = source_names(mangled);
            wanted.iter().all(|w| have.contains(w))
        })
        .map(String::as_str)
}

/// The identifiers of a demangled name before its parameter list, less
/// what a mangled name spells in codes: the return type, C++'s own type
/// names, the demangler's placeholders (`T1`), numbers.
fn spelled(kernel: &str) -> Vec<&str> {
    let name = kernel.strip_prefix("void ").unwrap_or(kernel);
    let head = name.split('(').next().unwrap_or(name);
    head.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
        .filter(|w| !is_placeholder(w) && !BUILTIN.contains(w))
        .collect()
}

fn is_placeholder(word: &str) -> bool {
    word.strip_prefix('T')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Words of C++ a mangled name writes as codes (`i`, `f`, `Lb1E`).
const BUILTIN: &[&str] = &[
    "void", "bool", "char", "short", "int", "long", "unsigned", "signed", "float", "double",
    "const", "volatile", "true", "false", "__half", "half", "auto",
];

/// The source names a mangled name spells: each `<length><identifier>`,
/// template arguments' too (`cutlass::Kernel<TileSum>` against cuBLAS's
/// `cutlass::Kernel<cutlass_80_...>`).
fn source_names(mangled: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = mangled;
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        let from = &rest[at..];
        match cudawatch_parsers::mangled::identifier(from).filter(|(n, _)| is_identifier(n)) {
            Some((name, after)) => {
                names.push(name);
                rest = after;
            }
            None => rest = from.trim_start_matches(|c: char| c.is_ascii_digit()),
        }
    }
    names
}

fn is_identifier(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_name_for_a_kernel_is_found_among_the_mangled_names_that_define_it() {
        // tests/gpu/beyond/cutlass_style_race.cu, as its binary holds it
        // and as compute-sanitizer 2026.4 named it (text and XML).
        let own = vec![
            "_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE".to_string(),
            "_Z10tiled_gemmPKfS0_Pfi".to_string(),
        ];
        for kernel in [
            "void cutlass::Kernel<TileSum>(T1::Params)",
            "cutlass::Kernel<TileSum>",
            "Kernel",
        ] {
            assert_eq!(defining(&own, kernel), Some(own[0].as_str()), "{kernel}");
        }
        assert_eq!(
            defining(
                &own,
                "tiled_gemm(const float *, const float *, float *, int)"
            ),
            Some(own[1].as_str())
        );
        // cuBLAS's own CUTLASS kernels are not the program's.
        for kernel in [
            "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x64_64x3_nn_align2>(T1::Params)",
            "cutlass::Kernel<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_64x1_tn_align2>",
            "nvjet_sm90_tst_144x64_64x8_2x4_h_bz_bias_TNN",
            "",
        ] {
            assert_eq!(defining(&own, kernel), None, "{kernel}");
        }
    }
}
