//! Nsight Compute's command lines: the profiling run (coalescing metrics
//! and cudawatch's own CoalescingSource section, one launch per kernel and
//! launch configuration by default) and the imports that turn its report
//! into CSV pages.

use std::ffi::OsString;
use std::path::Path;

/// The metrics ncu collects: requests and 32-byte sectors of global loads
/// and stores, the share of each sector used, and the kernel's duration.
/// The section adds the per-line excessive sectors.
pub const METRICS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,\
smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct,\
gpu__time_duration.sum";

/// The source-level counters of NVIDIA's SourceCounters section that the
/// report reads (per-line sectors, ideal and excessive, and the access),
/// without its warp-stall sampling: one replay pass fewer per launch, the
/// same per-line figures (docs/tool-surprises.md, "ncu: passes per kernel").
pub const SECTION: &str = include_str!("CoalescingSource.section");
/// The section's identifier, as `--section` names it.
pub const SECTION_NAME: &str = "CoalescingSource";
/// The folder, inside the stage's own, that the section is written to and
/// ncu reads sections from.
pub const SECTION_FOLDER: &str = "sections";

/// Which launches ncu profiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcuOptions {
    /// Most launches profiled with `all_launches`.
    pub launch_cap: u32,
    /// Every launch, not one per kernel and launch configuration.
    pub all_launches: bool,
    /// An ncu kernel filter (`regex:gemm`).
    pub kernel: Option<String>,
    /// PyTorch's own kernels and the libraries' profiled too: under
    /// `--gate-scope all` or `--fail-on warning`, where their coalescing
    /// can gate. By default they are left out (`vendor_filter`).
    pub vendor_kernels: bool,
}

impl NcuOptions {
    /// Whether ncu leaves PyTorch's own kernels and the libraries' out:
    /// neither told to profile them nor given the user's own kernel filter.
    pub fn leaves_out_vendors(&self) -> bool {
        !self.vendor_kernels && self.kernel.is_none()
    }
}

/// doctor's probe: one cheap metric of the probe's kernel, clocks left
/// alone as the stage leaves them, so only the counters' permission is
/// tested.
pub fn probe_argv(ncu: &Path, program: &[String]) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![
        ncu.into(),
        "--metrics".into(),
        "gpu__time_duration.sum".into(),
        "--clock-control".into(),
        "none".into(),
    ];
    argv.extend(program.iter().map(OsString::from));
    argv
}

/// The profiling argv: writes `<report>.ncu-rep`, reading the section
/// from `sections`; `python` when the program is a Python process; `own`:
/// the program's own kernels named like PyTorch's, which stay profiled.
pub fn profile_argv(
    ncu: &Path,
    options: &NcuOptions,
    own: &[String],
    sections: &Path,
    report: &Path,
    program: &[OsString],
    python: bool,
) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![
        ncu.into(),
        "--target-processes".into(),
        "all".into(),
        // Sector and request counts do not depend on clocks, and
        // leaving them alone needs no permission to lock them.
        "--clock-control".into(),
        "none".into(),
        "--metrics".into(),
        METRICS.into(),
        "--section-folder".into(),
        sections.into(),
        "--section".into(),
        SECTION_NAME.into(),
        "--import-source".into(),
        "yes".into(),
        // Each launch's host call stack: the line that launched it (issue
        // 21), read from the text import `stacks.txt` (the CSV pages carry
        // none). A Python program's line is a Python frame, and Python
        // stacks cost 4% on a DataLoader step where native ones cost 40%
        // (docs/tool-surprises.md); other programs need the native one.
        "--call-stack".into(),
        "--call-stack-type".into(),
        if python {
            "python".into()
        } else {
            "native".into()
        },
    ];
    if options.all_launches {
        argv.extend([
            "--launch-count".into(),
            options.launch_cap.to_string().into(),
        ]);
    } else {
        argv.extend([
            "--filter-mode".into(),
            "per-launch-config".into(),
            "--launch-count".into(),
            "1".into(),
        ]);
    }
    if let Some(filter) = &options.kernel {
        argv.extend(["--kernel-name".into(), filter.into()]);
    }
    if options.leaves_out_vendors() {
        argv.extend(super::vendor_filter::options(own));
    }
    argv.extend(["-f".into(), "-o".into(), report.into()]);
    argv.extend(program.iter().cloned());
    argv
}

/// ncu's kernel filter that leaves NCCL's kernels (`ncclDevKernel_...`,
/// `ncclKernel_...`) out: every name whose first four letters are not
/// `nccl`, written without look-ahead, which not every regex grammar has.
pub const NOT_NCCL: &str = "regex:^([^n]|n[^c]|nc[^c]|ncc[^l])";

/// Leaves NCCL's kernels out of a profiling argv of a program of several
/// processes (cudawatch's own filter already has them among the
/// libraries'; one from before is given them), unless the user chose which kernels ncu profiles; false
/// when the argv was left as it was. ncu serializes kernel launches across
/// every process it profiles, and a collective's kernel waits for its
/// peers' (NVIDIA/nccl#536).
pub fn leave_out_nccl(argv: &mut Vec<OsString>) -> bool {
    if argv.iter().any(|a| a == "--kernel-name") {
        return super::vendor_filter::add_nccl(argv);
    }
    let Some(at) = argv.iter().position(|a| a == "-f") else {
        return false;
    };
    argv.insert(at, NOT_NCCL.into());
    argv.insert(at, "--kernel-name".into());
    true
}

/// Whether a profiling command left NCCL's kernels out
/// ([`leave_out_nccl`]).
pub fn leaves_out_nccl(command: &[String]) -> bool {
    command.iter().any(|a| a == NOT_NCCL)
        || super::vendor_filter::left_out(command).is_some_and(|l| l.nccl)
}

/// Makes a profiling argv follow the program's own process only, not its
/// children (`--target-processes application-only`); false when the argv
/// had no such option. Following forked processes that never use the GPU
/// (a DataLoader's workers) made ncu 2.7 times slower on a training step.
pub fn follow_program_only(argv: &mut [OsString]) -> bool {
    match argv.iter().position(|a| a == "--target-processes") {
        Some(i) if i + 1 < argv.len() => {
            argv[i + 1] = "application-only".into();
            true
        }
        _ => false,
    }
}

/// Makes a profiling argv collect no Python call stacks (`--call-stack`
/// and `--call-stack-type python` dropped); false when it collected none.
/// They hold the program's frames, and with them tensors of Inductor's CUDA
/// graph pool, which fails the graphs (docs/tool-surprises.md, "CUDA graphs
/// and several processes"); the launches then name no launching line.
pub fn without_python_stacks(argv: &mut Vec<OsString>) -> bool {
    let Some(i) = argv
        .windows(2)
        .position(|w| w[0] == "--call-stack-type" && w[1] == "python")
    else {
        return false;
    };
    argv.drain(i..i + 2);
    if !argv.iter().any(|a| a == "--call-stack-type")
        && let Some(j) = argv.iter().position(|a| a == "--call-stack")
    {
        argv.remove(j);
    }
    true
}

/// Makes a profiling argv run the whole program once per replay pass
/// (`--replay-mode application`) instead of replaying each kernel, which
/// saves and restores the program's memory for every pass: beside a
/// program holding 48 GiB of an 80 GB GPU there is no room for that copy
/// on the GPU, and each launch took 15 s (the whole stage over 200 s,
/// against 65 s for application replay with the same figures;
/// docs/tool-surprises.md).
pub fn replay_whole_program(argv: &mut Vec<OsString>) {
    if argv.len() > 1 && !replays_whole_program(argv) {
        argv.splice(1..1, ["--replay-mode".into(), "application".into()]);
    }
}

/// The argv replays the whole program, not each kernel.
pub fn replays_whole_program<S: AsRef<std::ffi::OsStr>>(argv: &[S]) -> bool {
    argv.windows(2)
        .any(|w| w[0].as_ref() == "--replay-mode" && w[1].as_ref() == "application")
}

/// The GPU memory ncu's kernel replay needs beside a program that peaked
/// at `peak` MiB: the program's, a copy of it that each replay pass is
/// restored from (+16.5 GiB beside a 16.6 GiB program on the H100), and
/// ncu's own gigabyte. The stages' fit rule uses it too.
pub fn kernel_replay_mib(peak: u64) -> u64 {
    peak.saturating_mul(2).saturating_add(1024)
}

/// Whether ncu's kernel replay would find no room on the GPU for its copy
/// of a program that peaked at `peak` MiB on a GPU of `total` MiB: what it
/// needs above 90% of the GPU. An unknown total (0) says nothing.
pub fn no_room_for_a_copy(peak: u64, total: u64) -> bool {
    total > 0 && kernel_replay_mib(peak) > total / 10 * 9
}

/// The imports that turn a profile into CSV pages: (file name, argv).
pub fn imports(ncu: &Path, profile: &Path) -> Vec<(String, Vec<OsString>)> {
    let base = |page: &str| -> Vec<OsString> {
        vec![
            ncu.into(),
            "--import".into(),
            profile.into(),
            "--csv".into(),
            "--page".into(),
            page.into(),
            "--print-units".into(),
            "base".into(),
        ]
    };
    vec![
        ("raw.csv".into(), base("raw")),
        ("details.csv".into(), base("details")),
    ]
}

/// The text import of the call stacks, as one file (runs of other
/// versions) or, where the stage's output says how many launches were
/// profiled, in pieces (`stacks-<first launch>.txt`, read back in order).
pub const STACKS: &str = "stacks.txt";
/// Each piece's name starts so.
pub const STACKS_PIECE: &str = "stacks-";

/// Launches per piece of the call stacks' import, at most.
const STACK_LAUNCHES_PER_PIECE: usize = 16;
/// Pieces at most: each is an ncu process loading the whole profile.
const STACK_PIECES: usize = 8;

/// The call stacks' imports for a profile of `launches` launches (0:
/// unknown): (file name, argv). The text page that holds them takes about
/// 50 ms a launch to write (4.4 s for ResNet-18's 90 launches on the H100,
/// the longest import by far; docs/tool-surprises.md), so it is cut into
/// pieces that run at once.
pub fn stacks_imports(ncu: &Path, profile: &Path, launches: usize) -> Vec<(String, Vec<OsString>)> {
    let argv = |range: Option<(usize, Option<usize>)>| -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![
            ncu.into(),
            "--import".into(),
            profile.into(),
            "--page".into(),
            "details".into(),
            "--print-details".into(),
            "all".into(),
            "--print-units".into(),
            "base".into(),
        ];
        if let Some((skip, count)) = range {
            argv.extend(["--launch-skip".into(), skip.to_string().into()]);
            if let Some(count) = count {
                argv.extend(["--launch-count".into(), count.to_string().into()]);
            }
        }
        argv
    };
    if launches == 0 {
        return vec![(STACKS.into(), argv(None))];
    }
    let pieces = stack_pieces(launches);
    let last = pieces.len() - 1;
    pieces
        .into_iter()
        .enumerate()
        // The last piece runs to the profile's end: a count read from the
        // output that fell short must not cost the last launches their
        // stacks. A range past the end prints nothing and exits 0 (ncu
        // 2025.3.1), so a count too high costs nothing either.
        .map(|(i, (skip, count))| {
            let count = (i != last).then_some(count);
            (
                format!("{STACKS_PIECE}{skip}.txt"),
                argv(Some((skip, count))),
            )
        })
        .collect()
}

/// `launches` cut into pieces of at most 16, at most 8 pieces, as even as
/// may be: (first launch, launches).
fn stack_pieces(launches: usize) -> Vec<(usize, usize)> {
    let pieces = launches
        .div_ceil(STACK_LAUNCHES_PER_PIECE)
        .clamp(1, STACK_PIECES);
    let each = launches.div_ceil(pieces);
    (0..launches)
        .step_by(each.max(1))
        .map(|skip| (skip, each.min(launches - skip)))
        .collect()
}

/// The launches ncu says it profiled in its output (`==PROF== Profiling
/// "kernel" - 3: 0%....50%....100% - 6 passes`, one per launch), counted
/// wherever they are: a program's output without a final newline puts
/// ncu's next line after it.
pub fn profiled_launches(output: &[u8]) -> usize {
    const MARK: &[u8] = b"==PROF== Profiling \"";
    output.windows(MARK.len()).filter(|w| *w == MARK).count()
}

/// The source page of one launch: (file name, argv).
pub fn source_import(ncu: &Path, profile: &Path, launch: u64) -> (String, Vec<OsString>) {
    let argv: Vec<OsString> = vec![
        ncu.into(),
        "--import".into(),
        profile.into(),
        "--csv".into(),
        "--page".into(),
        "source".into(),
        "--print-source".into(),
        "cuda,sass".into(),
        "--print-units".into(),
        "base".into(),
        "--launch-skip".into(),
        launch.to_string().into(),
        "--launch-count".into(),
        "1".into(),
    ];
    (format!("source-{launch}.csv"), argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_stacks_are_imported_in_even_pieces_covering_every_launch_once() {
        assert_eq!(stack_pieces(10), [(0, 10)]);
        assert_eq!(stack_pieces(16), [(0, 16)]);
        assert_eq!(stack_pieces(17), [(0, 9), (9, 8)]);
        // ResNet-18's step: 90 launches in six pieces of 15.
        assert_eq!(
            stack_pieces(90),
            (0..6).map(|i| (i * 15, 15)).collect::<Vec<_>>()
        );
        for launches in 1..400 {
            let pieces = stack_pieces(launches);
            assert!(pieces.len() <= STACK_PIECES);
            let mut next = 0;
            for (skip, count) in pieces {
                assert_eq!(skip, next, "{launches}: pieces in order, no gap");
                assert!(count > 0);
                next = skip + count;
            }
            assert_eq!(next, launches, "{launches}: every launch once");
        }
        let imports = stacks_imports(Path::new("ncu"), Path::new("p.ncu-rep"), 20);
        assert_eq!(
            imports
                .iter()
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>(),
            ["stacks-0.txt", "stacks-10.txt"]
        );
        assert!(
            words(&imports[0].1)
                .ends_with(&["--launch-skip", "0", "--launch-count", "10"].map(String::from)),
            "{:?}",
            imports[0].1
        );
        // The last piece runs to the end, whatever the count said.
        assert!(
            words(&imports[1].1).ends_with(&["--launch-skip", "10"].map(String::from)),
            "{:?}",
            imports[1].1
        );
        // Launches unknown: one import of them all, as before.
        let whole = stacks_imports(Path::new("ncu"), Path::new("p.ncu-rep"), 0);
        assert_eq!(whole.len(), 1);
        assert_eq!(whole[0].0, STACKS);
        assert!(!words(&whole[0].1).contains(&"--launch-skip".to_string()));
    }

    #[test]
    fn profiled_launches_are_counted_from_ncus_own_lines() {
        let output = b"==PROF== Connected to process 42 (/usr/bin/python3.12)\n\
==PROF== Profiling \"gather\" - 0: 0%....50%....100% - 6 passes\n\
loss 2.3\n\
==PROF== Profiling \"gemm\" - 1: 0%....50%....100% - 6 passes\n\
==PROF== Disconnected from process 42\n";
        assert_eq!(profiled_launches(output), 2);
        let glued = b"step done==PROF== Profiling \"gemm\" - 1: 0%....50%....100% - 6 passes\n";
        assert_eq!(profiled_launches(glued), 1);
        assert_eq!(profiled_launches(b""), 0);
    }

    #[test]
    fn only_a_program_without_room_for_its_copy_replays_whole_and_only_once() {
        // The H100's 81,559 MiB: most_memory.py at 48 GiB and at 16.6 GiB.
        assert!(no_room_for_a_copy(49_458, 81_559));
        assert!(!no_room_for_a_copy(17_026, 81_559));
        assert!(!no_room_for_a_copy(49_458, 0), "no total read");
        let mut argv: Vec<OsString> = vec!["ncu".into(), "-o".into(), "p".into(), "./app".into()];
        replay_whole_program(&mut argv);
        replay_whole_program(&mut argv);
        assert_eq!(
            argv,
            ["ncu", "--replay-mode", "application", "-o", "p", "./app"]
                .map(OsString::from)
                .to_vec()
        );
        assert!(replays_whole_program(&argv));
    }

    fn words(argv: &[OsString]) -> Vec<String> {
        argv.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_profile_reads_the_stages_own_section_and_follows_every_process_until_told() {
        let options = NcuOptions {
            launch_cap: 100,
            all_launches: false,
            kernel: None,
            vendor_kernels: false,
        };
        let mut argv = profile_argv(
            Path::new("ncu"),
            &options,
            &[],
            Path::new("/run/ncu/sections"),
            Path::new("/run/ncu/profile"),
            &["python3".into(), "train.py".into()],
            true,
        );
        let w = words(&argv);
        let after = |flag: &str| w[w.iter().position(|a| a == flag).unwrap() + 1].clone();
        // A Python program's launching line is a Python frame: its stack
        // costs 4% where the native one costs 40%.
        assert_eq!(after("--call-stack-type"), "python");
        let native = profile_argv(
            Path::new("ncu"),
            &options,
            &[],
            Path::new("/run/ncu/sections"),
            Path::new("/run/ncu/profile"),
            &["./app".into()],
            false,
        );
        let native = words(&native);
        assert_eq!(
            native[native
                .iter()
                .position(|a| a == "--call-stack-type")
                .unwrap()
                + 1],
            "native"
        );
        assert_eq!(after("--section-folder"), "/run/ncu/sections");
        assert_eq!(after("--section"), SECTION_NAME);
        assert!(!w.iter().any(|a| a == "SourceCounters"));
        assert_eq!(after("--target-processes"), "all");
        assert!(follow_program_only(&mut argv));
        let w = words(&argv);
        assert_eq!(
            w[w.iter().position(|a| a == "--target-processes").unwrap() + 1],
            "application-only"
        );
        // The program's own arguments are never touched.
        assert_eq!(&w[w.len() - 2..], ["python3", "train.py"]);
        // PyTorch's own kernels and the libraries' are left out by
        // default, by mangled name; not where their coalescing can gate,
        // nor under the user's filter.
        assert_eq!(after("--kernel-name-base"), "mangled");
        assert!(
            after("--kernel-name").starts_with("regex:^(?!((?!.*(nvjet_|sm90_|sm100_)).*(cudnn|")
        );
        assert!(after("--kernel-name").contains("|^_ZN2at6native|"));
        for options in [
            NcuOptions {
                vendor_kernels: true,
                ..options.clone()
            },
            NcuOptions {
                kernel: Some("regex:gemm".into()),
                ..options.clone()
            },
        ] {
            let w = words(&profile_argv(
                Path::new("ncu"),
                &options,
                &[],
                Path::new("/s"),
                Path::new("/p"),
                &["python3".into(), "train.py".into()],
                true,
            ));
            assert!(!w.iter().any(|a| a == "--kernel-name-base"), "{w:?}");
            assert_eq!(
                w.iter().filter(|a| a.starts_with("regex:^(?!")).count(),
                0,
                "{w:?}"
            );
        }
        assert!(!follow_program_only(&mut ["python3".into()]));
    }

    #[test]
    fn the_section_keeps_the_column_labels_the_source_page_parser_reads() {
        for label in [
            "L2 Theoretical Sectors Global Excessive",
            "L2 Theoretical Sectors Global",
            "L2 Theoretical Sectors Global Ideal",
            "Access Operation",
        ] {
            assert!(SECTION.contains(&format!("Label: \"{label}\"")), "{label}");
        }
        assert!(SECTION.contains(&format!("Identifier: \"{SECTION_NAME}\"")));
    }
}
