//! Which launches a compute-sanitizer command checks: the options that
//! leave some out (a launch range, a kernel filter), read from its argv.
//! The stage rules name them when such a run crashes; the report keeps
//! those that hide stores from initcheck (`StageReport::unchecked_launches`).
//! racecheck's and synccheck's own default filter, library kernels left
//! out, lives here too.

use cudawatch_model::Tool;

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
pub const LIBRARY_KERNEL_NAMES: [&str; 16] = [
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
pub const FRAMEWORK_KERNEL_NAMES: [(&str, &str); 3] = [
    ("^_ZN2at6native", "ATen's at::native"),
    ("^_ZN2at4cuda", "ATen's at::cuda"),
    (
        "^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_",
        "ATen's softmax",
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
    let kept: Vec<&str> = NAME_PATTERNS
        .iter()
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
static NAME_PATTERNS: std::sync::LazyLock<Vec<(&str, Option<regex::Regex>)>> =
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
fn split_alternatives(regex: &str) -> Vec<&str> {
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

/// The first release whose racecheck runs a PyTorch program with library
/// kernels left out: 2025.3.1 crashes it in the first unchecked cuDNN
/// launch ("The Sanitizer failed to handle a hardware exception"),
/// allocator on or off; 2026.4 checked ResNet-18's first training step
/// that way in 14 s (H200, benches/training-scope.sh, 2026-11-28).
pub const LIBRARY_FILTER_SINCE: (u32, u32) = (2026, 4);

/// The stages that leave library kernels out, where their compute-sanitizer
/// survives it: what a library kernel shows them is the library's and
/// never gates (`judge::owner`). racecheck: its analysis of cuDNN's and
/// cuBLAS's shared memory was most of its time (ResNet-18's step, 117 s to
/// 14 s). synccheck: cuDNN's fused-attention backward floods it with
/// "Divergent thread(s) in block" (460,800 records in ViT-tiny's step, a
/// stopped try and a stackless one); left out, the step took 10 s with
/// no record, and the planted divergent barrier still gave its 32 (H200,
/// `benches/training-scope.sh floods`, 2026-11-28). Not memcheck (2026.4's
/// ends every cuDNN program with its own errors, docs/tool-surprises.md),
/// nor initcheck: left out of it, cuDNN's kernels take with them the
/// records that name the Hopper kernels whose stores it cannot see, and
/// ViT-tiny's reads of their output flood it all the same. Both leave
/// PyTorch's own kernels out too ([`FRAMEWORK_KERNEL_NAMES`]): ViT-tiny's
/// full check went from 52.4 s to 48.7 s (medians of three, H200,
/// 2026-11-29), racecheck 40 s to 26 s beside the other stages. Not
/// initcheck: an uninitialised read in ATen's kernel is the tensor the
/// user gave it (`torch.empty`, then `buf.sum()`), and gates.
pub const LIBRARY_FILTERED: [Tool; 2] = [Tool::Racecheck, Tool::Synccheck];

/// Whether a stage of `tool` leaves library kernels out: racecheck and
/// synccheck, by default (no kernel filter of the user's, no `--gate-scope
/// all`), with a compute-sanitizer of `version` known to survive it.
pub fn leaves_out_libraries(
    tool: Tool,
    launches: &super::SanitizerLaunches,
    version: Option<&str>,
) -> bool {
    LIBRARY_FILTERED.contains(&tool)
        && !launches.library_kernels
        && launches.kernel.is_none()
        && version
            .and_then(crate::tools::lookup::release)
            .is_some_and(|r| r >= LIBRARY_FILTER_SINCE)
}

/// racecheck's option that analyses one block (or cluster) of each launch
/// (`--racecheck-blocks first`): every launch checked, not every block.
pub const FIRST_BLOCK_OPTION: &str = "--racecheck-filter-cluster-id";

/// The options of a sanitizer command that leave launches unchecked
/// (`--launch-count 5`, `--launch-skip 2`, a kernel filter), read from the
/// options only: the program's own arguments after them are not the tool's.
pub fn launch_selection(command: &[String]) -> Vec<String> {
    const SELECTING: [&str; 4] = [
        "--launch-count",
        "--launch-skip",
        "--kernel-name",
        "--kernel-name-exclude",
    ];
    let mut found = Vec::new();
    let mut i = 1;
    // compute-sanitizer's options come in pairs, but for --xml (see
    // `super::argv::argv`); the first word that is no option is the program.
    while i < command.len() && command[i].starts_with("--") {
        if command[i] == "--xml" {
            i += 1;
            continue;
        }
        if let Some(value) = command.get(i + 1)
            && SELECTING.contains(&command[i].as_str())
        {
            found.push(format!("{} {value}", command[i]));
        }
        i += 2;
    }
    found
}

/// The options of [`launch_selection`] that leave launches unchecked
/// before or between checked ones: what those write, initcheck does not
/// see (a correct program's reads of it came out uninitialised:
/// sample-reports/beyond/fill_then_read/). A launch count alone leaves
/// out only launches after the checked ones.
pub fn unchecked_before(command: &[String]) -> Vec<String> {
    launch_selection(command)
        .into_iter()
        .filter(|flag| !flag.starts_with("--launch-count") && flag != "--launch-skip 0")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_selection_reads_the_tools_options_not_the_programs_arguments() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let command = words(
            "compute-sanitizer --tool initcheck --xml --save x.xml --launch-skip 1 \
             --kernel-name kns=gemm --launch-count 5 ./prog --launch-skip 9",
        );
        assert_eq!(
            launch_selection(&command),
            [
                "--launch-skip 1",
                "--kernel-name kns=gemm",
                "--launch-count 5"
            ]
        );
        // Launches left out only after the checked ones hide no writes.
        assert_eq!(
            unchecked_before(&command),
            ["--launch-skip 1", "--kernel-name kns=gemm"]
        );
        assert!(unchecked_before(&words("compute-sanitizer --launch-count 5 ./p")).is_empty());
        assert!(unchecked_before(&words("compute-sanitizer --launch-skip 0 ./p")).is_empty());
    }

    #[test]
    fn the_library_filter_keeps_checked_the_names_the_programs_own_kernels_carry() {
        assert!(NAME_PATTERNS.iter().all(|(_, pattern)| pattern.is_some()));
        let every = library_filter(&[]).unwrap();
        assert_eq!(
            every,
            "(cudnn|cublas|cutlass|xmma|nvjet|fmha|splitKreduce|gemv2T_kernel|gemv2N_kernel|\
             gemvNSP|gemmSN_|gemmk1_|cufft|nccl|(ampere|volta|turing|sm80|sm90|sm100)_[a-z0-9]*gemm|\
             implicit_convolve_sgemm|^_ZN2at6native|^_ZN2at4cuda|\
             ^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_)"
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
                "ATen's at::native",
                "ATen's at::cuda",
                "ATen's softmax"
            ])
        );
        // A user's own filter is not ours.
        assert_eq!(kept_checked("(mykernel)"), None);
        assert_eq!(kept_checked("cutlass"), None);
    }
}
