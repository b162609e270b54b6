//! Names in the Itanium C++ ABI's mangling, as the tools print kernels
//! (`_Z10tiled_gemmPKfS0_Pfi`, `_ZN2at6native13reduce_kernelILi128E...`),
//! read only as far as cudawatch needs them: the `<length><identifier>`
//! parts. The names come from the tools' output and the program's
//! binaries, so every length is checked: a length past the end, or one
//! that ends inside a character, reads as no identifier, never a panic.

/// The `<length><identifier>` at the start of `s`, and what follows it.
pub fn identifier(s: &str) -> Option<(&str, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let len: usize = s.get(..digits)?.parse().ok()?;
    let rest = &s[digits..];
    Some((rest.get(..len)?, rest.get(len..)?))
}

/// The function's path in a mangled name (`count_hits`, `ns::scale`,
/// `at::native::reduce_kernel`): its parameters and template arguments
/// left out. None for a name that is not mangled (`extern "C"` kernels)
/// or that this cannot read (a substitution, an operator).
pub fn function_path(mangled: &str) -> Option<Vec<&str>> {
    let rest = mangled.strip_prefix("_Z")?;
    let Some(mut nested) = rest.strip_prefix('N') else {
        return identifier(rest).map(|(name, _)| vec![name]);
    };
    let mut parts = Vec::new();
    while let Some((part, after)) = identifier(nested) {
        parts.push(part);
        nested = after;
    }
    // `E` ends the name; `I` opens a template's arguments.
    ((nested.starts_with('E') || nested.starts_with('I')) && !parts.is_empty()).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_and_its_identifier_are_read_and_a_bad_length_is_no_identifier() {
        assert_eq!(identifier("7cutlass6Kernel"), Some(("cutlass", "6Kernel")));
        assert_eq!(identifier("99short"), None);
        assert_eq!(identifier("1\u{e9}x"), None);
        assert_eq!(identifier("18446744073709551615x"), None);
        assert_eq!(identifier("99999999999999999999999x"), None);
        assert_eq!(identifier("x"), None);
    }

    #[test]
    fn a_functions_path_leaves_out_its_parameters_and_template_arguments() {
        assert_eq!(
            function_path("_Z10count_hitsPKiPii"),
            Some(vec!["count_hits"])
        );
        assert_eq!(function_path("_ZN2ns5scaleEPf"), Some(vec!["ns", "scale"]));
        assert_eq!(function_path("_Z6kernelIfEvPT_"), Some(vec!["kernel"]));
        assert_eq!(
            function_path("_ZN2at6native13reduce_kernelILi128ELi4ENS0_8ReduceOpIfEEEEvT1_"),
            Some(vec!["at", "native", "reduce_kernel"])
        );
        assert_eq!(function_path("plain_c_kernel"), None);
        assert_eq!(function_path("_ZN2nsX"), None);
    }
}
