//! compute-sanitizer's command line: the tool, an XML report written to a
//! file of its own, every record (`--print-limit 0`), an exit code for
//! "errors found" that a program is unlikely to use, and child processes.

use std::ffi::OsString;
use std::path::Path;

use cudawatch_model::Tool;

use super::launches::leaves_out_libraries;
use crate::tools::library_kernels::{libraries_filter, library_filter};

/// compute-sanitizer's exit code when it found errors, chosen to be unlikely
/// as a program's own (1, 2 and 255 are common; signals give 128+n). The
/// stage rules read it back, so it lives with them.
pub use super::rules::ERRORS_FOUND_EXIT as ERROR_EXITCODE;

/// What one sanitizer stage asks of compute-sanitizer.
pub struct SanitizerCall<'a> {
    /// The executable.
    pub executable: &'a Path,
    /// memcheck, racecheck, initcheck or synccheck.
    pub tool: Tool,
    /// Where the XML report goes.
    pub xml: &'a Path,
    /// A compute-sanitizer suppressions file (`--suppressions`).
    pub suppressions: Option<&'a Path>,
    /// memcheck only: `--leak-check full`.
    pub leak_check: bool,
    /// The program's own kernels whose names a library's carry (mangled,
    /// found in its binaries: `own_kernels`): the library filter leaves
    /// their names out, so that they stay checked.
    pub own_library_named: &'a [String],
    /// Which launches are checked.
    pub launches: &'a SanitizerLaunches,
    /// compute-sanitizer's version, when known.
    pub version: Option<&'a str>,
    /// The program is a Python process: its kernels are nearly all a
    /// framework's or a library's, whose initcheck records run to floods.
    pub python: bool,
}

/// The sanitizers' own cost levers, passed through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SanitizerLaunches {
    /// `--launch-count`.
    pub count: Option<u64>,
    /// `--launch-skip`.
    pub skip: Option<u64>,
    /// `--kernel-name`.
    pub kernel: Option<String>,
    /// `--destroy-on-device-error kernel`: a faulting kernel is stopped and
    /// the launches after it are still checked, so a second, independent
    /// bug is found in the same run (on the planted corpus it finds the
    /// same root causes as the tool's default, without the sticky errors
    /// that follow a destroyed context: sample-reports/beyond/corpus-*).
    pub recover_kernels: bool,
    /// racecheck and synccheck check library kernels too (`--gate-scope
    /// all`): by default they leave them out where compute-sanitizer can
    /// ([`leaves_out_libraries`]), since a race or barrier error inside one
    /// never gates (`judge::owner`).
    pub library_kernels: bool,
    /// racecheck analyses block (cluster) 0 of each launch only
    /// (`--racecheck-filter-cluster-id 0`, compute-sanitizer 2026.3+):
    /// 29 s against 49-64 s on ResNet-18's step, races in other blocks
    /// unseen (`--racecheck-blocks first`).
    pub racecheck_first_block: bool,
    /// initcheck keeps host call stacks in its records. Off by default:
    /// initcheck writes a record per thread, and unwinding each one's host
    /// stack is most of its time (ResNet-18: 191 s with, 26 s without, the
    /// same 40,960 records; docs/tool-surprises.md). A CUDA program's
    /// records keep the device frames that place them, a Python program's
    /// none ([`initcheck_stacks`]).
    pub initcheck_host_stacks: bool,
    /// Records a stage may print before it is stopped as a flood and run
    /// again without call stacks (`supervisor::stage`); 0: never.
    pub flood_records: u64,
    /// Seconds of nothing but repeated records before a memcheck stage
    /// under kernel-level recovery is taken for a loop
    /// (`supervisor::repeats`); 0: never.
    pub loop_seconds: u64,
}

impl SanitizerLaunches {
    /// Whether racecheck and synccheck may leave library kernels out:
    /// neither told to check them (`--gate-scope all`) nor given the
    /// user's own kernel filter (the release decides the rest:
    /// `launches::leaves_out_libraries`).
    pub fn may_leave_out_libraries(&self) -> bool {
        !self.library_kernels && self.kernel.is_none()
    }
}

/// The argv for `call` around `program`.
pub fn argv(call: &SanitizerCall<'_>, program: &[OsString]) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![
        call.executable.into(),
        "--tool".into(),
        call.tool.name().into(),
        "--xml".into(),
        "--save".into(),
        call.xml.into(),
        "--print-limit".into(),
        "0".into(),
        "--error-exitcode".into(),
        ERROR_EXITCODE.to_string().into(),
        "--target-processes".into(),
        "all".into(),
    ];
    if call.tool == Tool::Memcheck && call.leak_check {
        argv.extend(["--leak-check".into(), "full".into()]);
    }
    if let Some(n) = call.launches.count {
        argv.extend(["--launch-count".into(), n.to_string().into()]);
    }
    if let Some(n) = call.launches.skip {
        argv.extend(["--launch-skip".into(), n.to_string().into()]);
    }
    if let Some(filter) = &call.launches.kernel {
        argv.extend(["--kernel-name".into(), filter.into()]);
    }
    if call.tool == Tool::Initcheck && !call.launches.initcheck_host_stacks {
        argv.extend([
            "--show-backtrace".into(),
            initcheck_stacks(call.python).into(),
        ]);
    }
    if leaves_out_libraries(call.tool, call.launches, call.version) {
        argv.extend(library_exclusion(call.tool, call.own_library_named));
    }
    if call.tool == Tool::Racecheck && call.launches.racecheck_first_block {
        argv.extend([super::launches::FIRST_BLOCK_OPTION.into(), "0".into()]);
    }
    if call.launches.recover_kernels {
        argv.extend(["--destroy-on-device-error".into(), "kernel".into()]);
    }
    if let Some(file) = call.suppressions {
        argv.extend(["--suppressions".into(), file.into()]);
    }
    argv.extend(program.iter().cloned());
    argv
}

/// The options that leave library kernels out of `tool`'s stage
/// (`launches::LIBRARY_FILTERED` says why): racecheck and synccheck leave
/// PyTorch's out too; initcheck only the libraries', whose stores it keeps
/// tracking.
fn library_exclusion(tool: Tool, own_library_named: &[String]) -> Vec<OsString> {
    let filter = if tool == Tool::Initcheck {
        libraries_filter(own_library_named)
    } else {
        library_filter(own_library_named)
    };
    let Some(filter) = filter else {
        return Vec::new();
    };
    let mut options: Vec<OsString> = vec![
        "--kernel-name-exclude".into(),
        format!("regex={filter}").into(),
    ];
    if tool == Tool::Initcheck {
        options.extend([super::TRACK_FILTERED_STORES.into(), "yes".into()]);
    }
    options
}

/// The call stacks initcheck keeps by default. A CUDA program's: device
/// frames, which place a read inlined from another file at the user's
/// line. A Python program's: none. Its reads are nearly all in cuDNN's,
/// cuBLAS's and ATen's kernels (ResNet-18's step: 40,960 in cuDNN's
/// layout kernels; a bf16 ViT's: 33 million in ATen's reads of Hopper GEMM
/// output), which flooded every such stage: a first try stopped at the
/// flood limit, then this same run without stacks (ViT-tiny's step on an
/// H200: 23 s, then 32 s). Without stacks the tool keeps each launch's
/// first 256 records and counts the rest; a framework read without its
/// launching line is run again with host stacks (`host_stacks`) unless the
/// tool dropped records (a flood, where that rerun would cost as much).
fn initcheck_stacks(python: bool) -> &'static str {
    if python { "no" } else { "device" }
}

/// What ends every record in compute-sanitizer's text: a line that holds
/// only its prefix (one per record in every capture of sample-reports/).
/// A stage's flood watch counts it.
pub const RECORD_END: &[u8] = b"\n========= \n";

/// What starts every line compute-sanitizer prints (its `--prefix`,
/// which cudawatch never changes), among the program's own lines.
pub const LINE_PREFIX: &[u8] = b"=========";

/// Whether `tool`'s stage can flood and be made cheaper: the tools that
/// write a record per faulting thread (racecheck sums its hazards up
/// itself), while they still unwind call stacks for each.
pub fn can_flood(tool: Tool, argv: &[OsString]) -> bool {
    let per_thread = matches!(tool, Tool::Memcheck | Tool::Initcheck | Tool::Synccheck);
    per_thread
        && !argv
            .windows(2)
            .any(|w| w[0] == "--show-backtrace" && w[1] == "no")
}

/// Whether a sanitizer stage's records may only repeat themselves in a
/// loop the tool keeps alive: memcheck ending each faulting kernel
/// (`--destroy-on-device-error kernel`) while the program goes on, never
/// told (`supervisor::repeats`).
pub fn can_loop(tool: Tool, argv: &[OsString]) -> bool {
    tool == Tool::Memcheck && kernel_recovery_at(argv).is_some()
}

fn kernel_recovery_at(argv: &[OsString]) -> Option<usize> {
    argv.windows(2)
        .position(|w| w[0] == "--destroy-on-device-error" && w[1] == "kernel")
}

/// Makes a sanitizer argv end its checking at the first device error (the
/// tool's default, `--destroy-on-device-error context`) in place of
/// kernel-level recovery; false when it had none.
pub fn without_kernel_recovery(argv: &mut Vec<OsString>) -> bool {
    let Some(at) = kernel_recovery_at(argv) else {
        return false;
    };
    argv.drain(at..at + 2);
    true
}

/// Makes a sanitizer argv unwind no call stack (`--show-backtrace no` in
/// place of any `--show-backtrace` it had, before `--tool`): the tool then
/// keeps each launch's first 256 records and counts the rest, so a flood
/// costs about a program run (docs/tool-surprises.md, "Record floods").
/// False when the argv is not a sanitizer's (no `--tool`).
pub fn without_call_stacks(argv: &mut Vec<OsString>) -> bool {
    if !argv.iter().any(|a| a == "--tool") {
        return false;
    }
    if let Some(i) = argv.iter().position(|a| a == "--show-backtrace")
        && i + 1 < argv.len()
    {
        argv.drain(i..i + 2);
    }
    let at = argv.iter().position(|a| a == "--tool").unwrap_or(1);
    argv.splice(at..at, ["--show-backtrace".into(), "no".into()]);
    true
}

/// Makes a sanitizer argv unwind device call stacks only (`--show-backtrace
/// device` in place of a host one, before `--tool`); false when it unwound
/// no host stack already (`device`, `no`) or is not a sanitizer's. Host
/// stacks of a Python program hold its frames, and with them tensors of
/// Inductor's CUDA graph pool, which fails the graphs
/// (docs/tool-surprises.md, "CUDA graphs and several processes").
pub fn without_host_stacks(argv: &mut Vec<OsString>) -> bool {
    if !argv.iter().any(|a| a == "--tool") {
        return false;
    }
    let shown = argv.iter().position(|a| a == "--show-backtrace");
    if let Some(i) = shown
        && let Some(value) = argv.get(i + 1)
    {
        if value == "device" || value == "no" {
            return false;
        }
        argv[i + 1] = "device".into();
        return true;
    }
    let at = argv.iter().position(|a| a == "--tool").unwrap_or(1);
    argv.splice(at..at, ["--show-backtrace".into(), "device".into()]);
    true
}

/// doctor's probe: memcheck on a one-kernel program, with the stages' own
/// "errors found" exit code, its text output read back (no XML needed).
pub fn probe_argv(executable: &Path, program: &[String]) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![
        executable.into(),
        "--tool".into(),
        "memcheck".into(),
        "--error-exitcode".into(),
        ERROR_EXITCODE.to_string().into(),
    ];
    argv.extend(program.iter().map(OsString::from));
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv_of(tool: Tool, initcheck_host_stacks: bool) -> Vec<String> {
        argv_for(tool, initcheck_host_stacks, false)
    }

    fn argv_for(tool: Tool, initcheck_host_stacks: bool, python: bool) -> Vec<String> {
        let launches = SanitizerLaunches {
            initcheck_host_stacks,
            ..SanitizerLaunches::default()
        };
        let call = SanitizerCall {
            executable: Path::new("compute-sanitizer"),
            tool,
            xml: Path::new("x.xml"),
            suppressions: None,
            leak_check: false,
            own_library_named: &[],
            launches: &launches,
            version: None,
            python,
        };
        argv(&call, &["./app".into()])
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_flooded_stage_runs_again_with_no_stacks_in_place_of_its_own() {
        let mut initcheck: Vec<OsString> = argv_of(Tool::Initcheck, false)
            .into_iter()
            .map(OsString::from)
            .collect();
        assert!(can_flood(Tool::Initcheck, &initcheck));
        assert!(without_call_stacks(&mut initcheck));
        let shown: Vec<String> = initcheck
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            &shown[..4],
            ["compute-sanitizer", "--show-backtrace", "no", "--tool"]
        );
        assert_eq!(
            shown.iter().filter(|a| *a == "--show-backtrace").count(),
            1,
            "initcheck's `device` is replaced: {shown:?}"
        );
        assert_eq!(shown.last().unwrap(), "./app", "the program is untouched");
        assert!(!can_flood(Tool::Initcheck, &initcheck), "once is enough");
        let racecheck: Vec<OsString> = argv_of(Tool::Racecheck, false)
            .into_iter()
            .map(OsString::from)
            .collect();
        assert!(!can_flood(Tool::Racecheck, &racecheck));
        assert!(!without_call_stacks(&mut vec![
            "python3".into(),
            "x.py".into()
        ]));
    }

    #[test]
    fn a_python_programs_initcheck_keeps_no_stack_at_all_and_a_cuda_programs_its_device_frames() {
        let stacks = |a: &[String]| {
            let at = a.iter().position(|w| w == "--show-backtrace")?;
            a.get(at + 1).cloned()
        };
        assert_eq!(
            stacks(&argv_for(Tool::Initcheck, false, true)).as_deref(),
            Some("no")
        );
        assert_eq!(
            stacks(&argv_for(Tool::Initcheck, false, false)).as_deref(),
            Some("device")
        );
        // --host-stacks all keeps every stack, Python or not.
        assert_eq!(stacks(&argv_for(Tool::Initcheck, true, true)), None);
        for tool in [Tool::Memcheck, Tool::Racecheck, Tool::Synccheck] {
            assert_eq!(stacks(&argv_for(tool, false, true)), None, "{tool:?}");
        }
    }

    #[test]
    fn only_initcheck_drops_host_stacks_and_only_by_default() {
        let device_only = |a: &[String]| a.windows(2).any(|w| w == ["--show-backtrace", "device"]);
        assert!(device_only(&argv_of(Tool::Initcheck, false)));
        assert!(!device_only(&argv_of(Tool::Initcheck, true)));
        for tool in [Tool::Memcheck, Tool::Racecheck, Tool::Synccheck] {
            assert!(
                !device_only(&argv_of(tool, false)),
                "{tool:?} keeps its host stacks"
            );
        }
    }

    #[test]
    fn racecheck_synccheck_and_initcheck_leave_library_kernels_out_only_where_the_tool_survives_it()
    {
        let stage = |tool: Tool, version: Option<&str>, launches: &SanitizerLaunches| -> String {
            let call = SanitizerCall {
                executable: Path::new("compute-sanitizer"),
                tool,
                xml: Path::new("x.xml"),
                suppressions: None,
                leak_check: false,
                own_library_named: &[],
                launches,
                version,
                python: true,
            };
            argv(&call, &["python3".into(), "train.py".into()])
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let racecheck = |version: Option<&str>, launches: &SanitizerLaunches| {
            stage(Tool::Racecheck, version, launches)
        };
        let default = SanitizerLaunches::default();
        let filter = format!(
            "--kernel-name-exclude regex={}",
            library_filter(&[]).unwrap()
        );
        assert!(stage(Tool::Synccheck, Some("2026.4.0.0"), &default).contains(&filter));
        // memcheck checks every kernel, whatever the release.
        assert!(
            !stage(Tool::Memcheck, Some("2026.4.0.0"), &default).contains("--kernel-name-exclude")
        );
        // initcheck leaves the libraries' kernels out, never PyTorch's (a
        // read of a `torch.empty` buffer in ATen's sum is the user's bug),
        // and keeps tracking what the left-out ones write.
        let initcheck = stage(Tool::Initcheck, Some("2026.4.0.0"), &default);
        let libraries = format!(
            "--kernel-name-exclude regex={} --initcheck-track-filtered-global-memory yes",
            crate::tools::library_kernels::libraries_filter(&[]).unwrap()
        );
        assert!(initcheck.contains(&libraries), "{initcheck}");
        assert!(!initcheck.contains("_ZN2at6native"), "{initcheck}");
        for version in [Some("2025.3.1.0"), None] {
            let old = stage(Tool::Initcheck, version, &default);
            assert!(!old.contains("--kernel-name-exclude"), "{old}");
            assert!(!old.contains("--initcheck-track"), "{old}");
        }
        assert!(racecheck(Some("2026.4.0.0"), &default).contains(&filter));
        assert!(racecheck(Some("2027.1.0.0"), &default).contains(&filter));
        // 2025.3.1 crashes in the first unchecked cuDNN launch; an unknown
        // version is not trusted either.
        for version in [Some("2025.3.1.0"), Some("2026.3.0.0"), None] {
            assert!(
                !racecheck(version, &default).contains("--kernel-name-exclude"),
                "{version:?}"
            );
        }
        // --gate-scope all, or the user's own kernel filter: every kernel.
        let all = SanitizerLaunches {
            library_kernels: true,
            ..SanitizerLaunches::default()
        };
        let own = SanitizerLaunches {
            kernel: Some("kns=my_kernel".into()),
            ..SanitizerLaunches::default()
        };
        assert!(!racecheck(Some("2026.4.0.0"), &all).contains("--kernel-name-exclude"));
        assert!(
            !stage(Tool::Synccheck, Some("2026.4.0.0"), &all).contains("--kernel-name-exclude")
        );
        assert!(!racecheck(Some("2026.4.0.0"), &own).contains("--kernel-name-exclude"));
        assert!(
            !stage(Tool::Initcheck, Some("2026.4.0.0"), &all).contains("--kernel-name-exclude")
        );
        // initcheck asked to keep host stacks: a library's read of the
        // user's tensor then has the user's line, and stays checked.
        let stacks = SanitizerLaunches {
            initcheck_host_stacks: true,
            ..SanitizerLaunches::default()
        };
        assert!(
            !stage(Tool::Initcheck, Some("2026.4.0.0"), &stacks).contains("--kernel-name-exclude")
        );
        assert!(racecheck(Some("2026.4.0.0"), &stacks).contains(&filter));
    }

    #[test]
    fn the_library_filter_matches_library_kernels_the_owner_judge_agrees_on_and_no_users() {
        let filter = regex::Regex::new(&library_filter(&[]).unwrap()).unwrap();
        // Mangled names as compute-sanitizer matches them, of kernels seen
        // in ResNet-18, ViT-tiny and GPT-2 steps on the H100 and H200.
        let library = [
            "_ZN5cudnn19engines_precompiled16nhwcToNchwKernelIfffLb1ELb0EL21cudnnKernelDataType_t0EEEvNS0_18nhwc2nchw_params_tIT1_EEPKT_PT0_",
            "sm90_xmma_dgrad_implicit_gemm_indexed_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x64x32_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
            "nvjet_sst_64x8_64x16_2x1_v_bz_TNT",
            "_Z17gemv2T_kernel_valIiiffffLi128ELi16ELi4ELi4ELb0ELb0E18cublasGemvParamsExIi30cublasGemvTensorStridedBatchedIKfES3_S1_IfEfEEvT11_T4_S7_",
            "ampere_sgemm_128x64_nn",
            "sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel",
            "_ZN7cutlass7Kernel2I53cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4EEvNT_6ParamsE",
            "fmha_cutlassF_f32_aligned_64x64_rf_sm80",
            "_Z19splitKreduce_kernelILi32ELi16EiffffLb1ELb0ELb0EEv18cublasSplitKParamsIT4_EPKT2_PKT3_PS6_PKS3_SB_PKT5_PvlPS3_Pi",
            "_Z20ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE",
        ];
        for name in library {
            assert!(filter.is_match(name), "{name}");
            assert_eq!(
                crate::judge::owner::of_kernel(name),
                cudawatch_model::Owner::Library,
                "{name}"
            );
        }
        // PyTorch's own (ViT-tiny's step under racecheck on the H200,
        // `--dump-kernel-launches`): its shared memory is ATen's code.
        for name in [
            "_ZN2at6native29vectorized_elementwise_kernelILi8EZNS0_25bfloat16_copy_kernel_cudaERNS_18TensorIteratorBaseEEUlfE_St5arrayIPcLm2EEEEviT0_T1_",
            "_ZN43_GLOBAL__N__b6de9c8c_10_SoftMax_cu_9f978f6320softmax_warp_forwardIN3c108BFloat16ES2_fLi4ELb1ELb0EEEvPT0_PKT_iiiPKbib",
            "_Z23implicit_convolve_sgemmI13__nv_bfloat16S0_Li128ELi5ELi5ELi3ELi3ELi3ELi1ELb0ELb0ELb1EEviiiPKT_iPT0_S3_18kernel_conv_paramsyiffi",
            // torchvision's, PyTorch's copy of CUB, and ATen's in its
            // sources' anonymous namespaces, as ncu listed them in a
            // Faster R-CNN step (H200, 2026-11-29).
            "_ZN6vision3ops51_GLOBAL__N__9a0184f7_13_nms_kernel_cu_494c42a1_438715nms_kernel_implIfEEvidPKT_Py",
            "_ZN14at_cuda_detail3cub6detail4scan23DeviceCompactInitKernelINS0_13ScanTileStateIiLb1EEEPiEEvT_iT0_",
            "_ZN44_GLOBAL__N__50c743a2_11_Indexing_cu_89862edb33indexing_backward_kernel_stride_1IfEEvPKlS2_PKT_PS3_llllb",
            "_ZN44_GLOBAL__N__fb1fc55b_11_Randperm_cu_4012db6537randperm_handle_duplicate_keys_kernelIiN2at6native44_GLOBAL__N__fb1fc55b_11_Randperm_cu_4012db6510OpaqueTypeILi8EEEEEvPT_PT0_S6_iNS1_15PhiloxCudaStateE",
            "_ZN50_GLOBAL__N__fa15d16e_17_RangeFactories_cu_38772b0829elementwise_kernel_with_indexIiZZZN2at6native15arange_cuda_outERKN3c106ScalarES6_S6_RNS1_6TensorEENKUlvE_clEvENKUlvE1_clEvEUllE_EEvT_T0_PN15function_traitsISD_E11result_typeE",
        ] {
            assert!(filter.is_match(name), "{name}");
            assert_ne!(
                crate::judge::owner::of_kernel(name),
                cudawatch_model::Owner::User,
                "{name}"
            );
        }
        // The user's kernels: a tiled GEMM, one templated on PyTorch's
        // bf16 or on an ATen type (ATen's name inside the user's), an
        // Inductor kernel (Triton's code, checked), a softmax of the user's.
        for name in [
            "_Z10tiled_gemmPKfS0_Pfi",
            "_Z9smem_racePii",
            "scaled_relu_fwd",
            "_Z9my_kernelIN3c108BFloat16EEvPT_i",
            "_Z10scale_rowsIN2at6native4FooEEvPf",
            "_Z20softmax_warp_forwardPfi",
            "_ZN8myvision8roi_poolEPf",
            "_ZN40_GLOBAL__N__1f2e3d4c_8_gather_cu_5a6b7c8d6gatherEPf",
            "triton_poi_fused_add_0",
        ] {
            assert!(!filter.is_match(name), "{name}");
        }
    }
}
