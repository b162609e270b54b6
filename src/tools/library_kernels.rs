//! Which kernels are NVIDIA's libraries' and PyTorch's own, by their
//! mangled names, as the filters the tools read them with. What one of
//! them shows is its own code and never gates under the default gate
//! (`judge::owner`, `judge::policy`), so the stages that pay per launch
//! leave them out where nothing they could show would change the verdict:
//!
//! - racecheck and synccheck, library and PyTorch's kernels
//!   ([`library_filter`], `sanitizer::launches` says when);
//! - ncu, PyTorch's kernels ([`framework_filter`]) and library kernels
//!   ([`libraries_filter`]) but NVIDIA's Hopper and Blackwell ones, whose
//!   rows say which ran, whose stores initcheck cannot see
//!   (`judge::owner::unseen_writer`); `ncu::argv` says when.
//!
//! `--gate-scope all` checks them all. The program's own kernels that
//! carry such a name (found in its binaries: `sanitizer::own_kernels`)
//! stay checked: the filters leave out only the names none of them match.

/// NVIDIA's library kernels by their mangled names, as compute-sanitizer's
/// `regex=` filter reads them (ECMAScript, searched in the name, case
/// kept): cuDNN's (its namespace, its `sm90_xmma_*` and CUTLASS builds,
/// fused attention, its legacy `implicit_convolve_sgemm`), cuBLAS's
/// (`nvjet_*`, `sm80_xmma_*`, `ampere_sgemm_*`, `gemv2T_kernel`, split-K
/// reductions), NCCL's, cuFFT's. Only names [`crate::judge::owner`] calls
/// a library's (a test holds it), and never a bare `gemm`: a user's tiled
/// GEMM is the shared-memory kernel most likely to race. One alternative
/// each, so that those the program's own kernels match can be left out of
/// the filter ([`library_filter`]).
pub const LIBRARY_KERNEL_NAMES: [&str; 20] = [
    "cudnn",
    "cublas",
    "cutlass",
    "xmma",
    "nvjet",
    "fmha",
    "splitKreduce",
    "gemv2T_kernel",
    "gemv2N_kernel",
    "gemvNSP",
    "gemmSN_",
    "gemmk1_",
    "cufft",
    "nccl",
    "(ampere|volta|turing|sm80|sm90|sm100)_[a-z0-9]*gemm",
    "implicit_convolve_sgemm",
    // cuDNN's RNN kernels, whose names do not say cuDNN
    // (`RNN_bidirectional_accum_bp1_1`, `GRU_elementWise_bp1`).
    "RNN_blockPersist_",
    "RNN_bidirectional_accum_",
    "persistRNN_",
    "(LSTM|GRU|GENERIC)_elementWise_",
];

/// PyTorch's own kernels (ATen's), each with the words a stage's reason
/// names it by: what `judge::owner` calls the framework's, as their
/// mangled names start (`at::native::`, `at::cuda::`), or ATen's softmax
/// in its source file's anonymous namespace. Anchored at the name's start:
/// a user's kernel taking `c10::BFloat16` or an ATen type as a template
/// argument names ATen inside its own name, and stays checked. A race in
/// an ATen kernel's shared memory, or a barrier its threads miss, is in
/// ATen's code whatever tensors it was given (`judge::owner`), and on a
/// pure PyTorch model they were nearly every launch racecheck analysed
/// (ViT-tiny's step alone on an H200: racecheck 25 s with them, 15 s
/// without, its plain run 10 s; 1,042 of its 1,043 launches left out).
pub const FRAMEWORK_KERNEL_NAMES: [(&str, &str); 6] = [
    ("^_ZN2at6native", "ATen's at::native"),
    ("^_ZN2at4cuda", "ATen's at::cuda"),
    (
        "^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_",
        "ATen's softmax",
    ),
    // torchvision's detection ops (`judge::owner::torchvisions`): a
    // Faster R-CNN step's RoIAlign and NMS.
    ("^_ZN6vision", "torchvision's vision::"),
    // PyTorch's own copy of CUB (its sorts, selects and scans), and ATen's
    // kernels in the anonymous namespaces of its range, randperm and
    // indexing sources: 27 of the 36 launches ncu still profiled in a
    // Faster R-CNN step after the libraries' were left out (H200,
    // 2026-11-29).
    ("^_ZN14at_cuda_detail", "PyTorch's CUB"),
    (
        "^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_(RangeFactories|Randperm|Indexing)_cu_",
        "ATen's arange, randperm and indexing",
    ),
];

/// Every name of the filter, in its order, with the words a reason names
/// it by: the libraries' as written, then PyTorch's.
fn filter_names() -> impl Iterator<Item = (&'static str, &'static str)> {
    LIBRARY_KERNEL_NAMES
        .into_iter()
        .map(|name| (name, name))
        .chain(FRAMEWORK_KERNEL_NAMES)
}

/// The `regex=` value of racecheck's and synccheck's library filter: every
/// name of [`LIBRARY_KERNEL_NAMES`] and [`FRAMEWORK_KERNEL_NAMES`] but those that match one of the
/// program's own kernels (`own`, mangled names found in its binaries:
/// `cutlass::Kernel<TileSum>` is the user's code built on CUTLASS, and
/// stays checked). None when nothing is left to leave out.
pub fn library_filter(own: &[String]) -> Option<String> {
    alternatives(NAME_PATTERNS.iter(), own)
}

/// The alternatives of ncu's filter of library kernels: every name of
/// [`LIBRARY_KERNEL_NAMES`] but those that match one of the program's own
/// kernels, `(cudnn|cublas|...)`. None when nothing is left to leave out.
pub fn libraries_filter(own: &[String]) -> Option<String> {
    alternatives(NAME_PATTERNS.iter().take(LIBRARY_KERNEL_NAMES.len()), own)
}

/// The alternatives of ncu's filter of PyTorch's kernels: every name of
/// [`FRAMEWORK_KERNEL_NAMES`] but those that match one of the program's own
/// kernels, `(^_ZN2at6native|...)`. None when nothing is left to leave out.
pub fn framework_filter(own: &[String]) -> Option<String> {
    alternatives(NAME_PATTERNS.iter().skip(LIBRARY_KERNEL_NAMES.len()), own)
}

/// `(a|b|...)` of the names among `names` that match none of `own`.
fn alternatives<'a>(
    names: impl Iterator<Item = &'a (&'static str, Option<regex::Regex>)>,
    own: &[String],
) -> Option<String> {
    let kept: Vec<&str> = names
        .filter(|(_, pattern)| {
            !own.iter()
                .any(|k| pattern.as_ref().is_some_and(|p| p.is_match(k)))
        })
        .map(|(name, _)| *name)
        .collect();
    (!kept.is_empty()).then(|| format!("({})", kept.join("|")))
}

/// Each name of the filter with its compiled pattern (all compile: a
/// test holds it).
static NAME_PATTERNS: std::sync::LazyLock<Vec<(&'static str, Option<regex::Regex>)>> =
    std::sync::LazyLock::new(|| {
        filter_names()
            .map(|(name, _)| (name, regex::Regex::new(name).ok()))
            .collect()
    });

/// The names of the filter that a library filter of ours (`regex=`
/// value) does not have, by the words a reason names them with: those
/// kept checked because the program's own kernels carry them (or, in a
/// run of a release before PyTorch's kernels were left out, ATen's). None
/// when `filter` is not ours.
pub fn kept_checked(filter: &str) -> Option<Vec<&'static str>> {
    let inner = filter.strip_prefix('(')?.strip_suffix(')')?;
    let mut names = filter_names();
    let mut kept_checked = Vec::new();
    // Ours lists a subsequence of the names, in their order.
    for part in split_alternatives(inner) {
        loop {
            let (name, shown) = names.next()?;
            if name == part {
                break;
            }
            kept_checked.push(shown);
        }
    }
    kept_checked.extend(names.map(|(_, shown)| shown));
    Some(kept_checked)
}

/// `a|(b|c)_x|d` split at its top level: `a`, `(b|c)_x`, `d`.
pub fn split_alternatives(regex: &str) -> Vec<&str> {
    let (mut depth, mut start, mut parts) = (0usize, 0usize, Vec::new());
    for (i, c) in regex.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '|' if depth == 0 => {
                parts.push(&regex[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&regex[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_filter_keeps_checked_the_names_the_programs_own_kernels_carry() {
        assert!(NAME_PATTERNS.iter().all(|(_, pattern)| pattern.is_some()));
        let every = library_filter(&[]).unwrap();
        assert_eq!(
            every,
            "(cudnn|cublas|cutlass|xmma|nvjet|fmha|splitKreduce|gemv2T_kernel|gemv2N_kernel|\
             gemvNSP|gemmSN_|gemmk1_|cufft|nccl|(ampere|volta|turing|sm80|sm90|sm100)_[a-z0-9]*gemm|\
             implicit_convolve_sgemm|RNN_blockPersist_|RNN_bidirectional_accum_|\
             persistRNN_|(LSTM|GRU|GENERIC)_elementWise_|^_ZN2at6native|^_ZN2at4cuda|\
             ^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_|^_ZN6vision|^_ZN14at_cuda_detail|\
             ^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_(RangeFactories|Randperm|Indexing)_cu_)"
        );
        assert_eq!(kept_checked(&every), Some(vec![]));
        // A user's kernel built on CUTLASS's wrapper (tests/gpu/beyond/
        // cutlass_style_race.cu), and one named like cuBLAS's Ampere GEMMs.
        let own = [
            "_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE".to_string(),
            "_Z19sm80_mygemm_kernelPf".to_string(),
        ];
        let filter = library_filter(&own).unwrap();
        let re = regex::Regex::new(&filter).unwrap();
        assert!(own.iter().all(|k| !re.is_match(k)), "{filter}");
        assert!(re.is_match("nvjet_sm90_tst_144x64_64x8_2x4_h_bz_bias_TNN"));
        assert_eq!(
            kept_checked(&filter),
            Some(vec![
                "cutlass",
                "(ampere|volta|turing|sm80|sm90|sm100)_[a-z0-9]*gemm"
            ])
        );
        // A run's filter from before PyTorch's kernels were left out:
        // they were checked, and its reason says so.
        let before = every
            .split("|implicit_convolve_sgemm")
            .next()
            .unwrap()
            .to_string()
            + ")";
        assert_eq!(
            kept_checked(&before),
            Some(vec![
                "implicit_convolve_sgemm",
                "RNN_blockPersist_",
                "RNN_bidirectional_accum_",
                "persistRNN_",
                "(LSTM|GRU|GENERIC)_elementWise_",
                "ATen's at::native",
                "ATen's at::cuda",
                "ATen's softmax",
                "torchvision's vision::",
                "PyTorch's CUB",
                "ATen's arange, randperm and indexing"
            ])
        );
        // A user's own filter is not ours.
        assert_eq!(kept_checked("(mykernel)"), None);
        assert_eq!(kept_checked("cutlass"), None);
    }

    #[test]
    fn ncus_filter_leaves_out_pytorchs_kernels_but_those_the_program_owns() {
        assert_eq!(
            libraries_filter(&[]).unwrap(),
            library_filter(&[])
                .unwrap()
                .split("|^_ZN2at")
                .next()
                .unwrap()
                .to_string()
                + ")"
        );
        let every = framework_filter(&[]).unwrap();
        assert_eq!(
            every,
            "(^_ZN2at6native|^_ZN2at4cuda|^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_|\
             ^_ZN6vision|^_ZN14at_cuda_detail|\
             ^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_(RangeFactories|Randperm|Indexing)_cu_)"
        );
        let re = regex::Regex::new(&every).unwrap();
        // ViT-tiny's ATen launches on the H200, and what stays profiled:
        // cuBLAS's, and a user's kernel templated on an ATen type.
        assert!(re.is_match(
            "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
        ));
        assert!(!re.is_match("nvjet_sm90_tst_144x64_64x8_2x4_h_bz_bias_TNN"));
        assert!(!re.is_match("_Z9my_kernelIN3c108BFloat16EEvPT_i"));
        // A user's extension kernel in at::native keeps its namespace
        // profiled, the other names still left out.
        let own = ["_ZN2at6native9my_kernelEPf".to_string()];
        assert_eq!(
            framework_filter(&own).unwrap(),
            "(^_ZN2at4cuda|^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_|^_ZN6vision|\
             ^_ZN14at_cuda_detail|\
             ^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_(RangeFactories|Randperm|Indexing)_cu_)"
        );
    }
}
