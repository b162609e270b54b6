//! Which launches a compute-sanitizer command checks: the options that
//! leave some out (a launch range, a kernel filter), read from its argv.
//! The stage rules name them when such a run crashes; the report keeps
//! those that hide stores from initcheck (`StageReport::unchecked_launches`).
//! When racecheck and synccheck leave library kernels out
//! (`super::super::library_kernels` says which).

use cudawatch_model::Tool;

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
/// `benches/training-scope.sh floods`, 2026-11-28). Both leave PyTorch's
/// own kernels out too (`library_kernels::FRAMEWORK_KERNEL_NAMES`):
/// ViT-tiny's full check went from 52.4 s to 48.7 s (medians of three,
/// H200, 2026-11-29), racecheck 40 s to 26 s beside the other stages.
/// initcheck leaves the libraries' kernels out, never PyTorch's (an
/// uninitialised read in ATen's kernel is the tensor the user gave it:
/// `torch.empty`, then `buf.sum()`, and gates), and keeps tracking what
/// the left-out kernels write ([`TRACK_FILTERED_STORES`]), so that reads
/// of it are not taken for uninitialised. A library kernel's uninitialised
/// read never gates by default: it has no launching line (initcheck keeps
/// no host stack, and its rerun with them is not made for a library's
/// site: `host_stacks`). EfficientNet-B0's first two steps in fp16:
/// 178 s under the toolkit's initcheck alone, 85 s under 2026.4 with the
/// libraries' kernels left out (cuDNN's layout kernels were most of its
/// 335 million records; H200, 2026-11-29). Not memcheck (2026.4's ends
/// every cuDNN program with its own errors, docs/tool-surprises.md).
pub const LIBRARY_FILTERED: [Tool; 3] = [Tool::Racecheck, Tool::Synccheck, Tool::Initcheck];

/// compute-sanitizer 2026.4's initcheck option that keeps tracking the
/// global stores of kernels a filter left out (its default, said anyway:
/// with `no`, every read of what they wrote is "uninitialised").
pub const TRACK_FILTERED_STORES: &str = "--initcheck-track-filtered-global-memory";

/// Whether a stage of `tool` leaves library kernels out: racecheck and
/// synccheck, by default (no kernel filter of the user's, no `--gate-scope
/// all`), with a compute-sanitizer of `version` known to survive it.
pub fn leaves_out_libraries(
    tool: Tool,
    launches: &super::SanitizerLaunches,
    version: Option<&str>,
) -> bool {
    LIBRARY_FILTERED.contains(&tool)
        && launches.may_leave_out_libraries()
        // With host stacks kept, a library kernel's read of the user's
        // tensor has the user's launching line, and can gate.
        && !(tool == Tool::Initcheck && launches.initcheck_host_stacks)
        && version
            .and_then(crate::tools::lookup::release)
            .is_some_and(|r| r >= LIBRARY_FILTER_SINCE)
}

/// Whether a sanitizer command left library kernels out with cudawatch's
/// own filter ([`leaves_out_libraries`]), read from its options.
pub fn leaves_out_libraries_in(command: &[String]) -> bool {
    launch_selection(command).iter().any(|flag| {
        flag.strip_prefix("--kernel-name-exclude regex=")
            .and_then(crate::tools::library_kernels::kept_checked)
            .is_some()
    })
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
/// out only launches after the checked ones, and a kernel filter under
/// [`TRACK_FILTERED_STORES`] hides no store (2026.4 tracks them).
pub fn unchecked_before(command: &[String]) -> Vec<String> {
    let stores_tracked = command
        .windows(2)
        .any(|w| w[0] == TRACK_FILTERED_STORES && w[1] == "yes");
    launch_selection(command)
        .into_iter()
        .filter(|flag| !flag.starts_with("--launch-count") && flag != "--launch-skip 0")
        .filter(|flag| !(stores_tracked && flag.starts_with("--kernel-name")))
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
        // initcheck's library filter under 2026.4, whose left-out kernels'
        // stores are tracked: no read of theirs is doubted for it.
        let tracked = words(
            "compute-sanitizer --tool initcheck --kernel-name-exclude regex=(cudnn) \
             --initcheck-track-filtered-global-memory yes ./p",
        );
        assert!(unchecked_before(&tracked).is_empty());
        let untracked = tracked
            .iter()
            .map(|w| w.replace("yes", "no"))
            .collect::<Vec<_>>();
        assert_eq!(
            unchecked_before(&untracked),
            ["--kernel-name-exclude regex=(cudnn)"]
        );
    }
}
