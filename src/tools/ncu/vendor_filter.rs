//! ncu's default filter: what others wrote left out of the profile.
//! PyTorch's own kernels (ATen's, torchvision's) and NVIDIA's libraries'
//! (cuDNN's, cuBLAS's, CUTLASS's, NCCL's) are most launches of a PyTorch
//! model (ViT-tiny's step: 49 of the 70 ncu profiled were ATen's; a Faster
//! R-CNN step: about 200 of 217 were cuDNN's and cuBLAS's, 110 s of ncu),
//! and their coalescing is their own code: a launch from the user's line
//! is reported but gates only under `--fail-on warning`, and every one
//! only under `--gate-scope all`; with either, they are profiled
//! (`NcuOptions::vendor_kernels`). The libraries' Hopper and Blackwell
//! kernels (`nvjet_*`, `sm90_*`, `sm100_*`) stay profiled: their rows are
//! what says such a kernel ran, whose stores initcheck cannot see
//! (`judge::owner::unseen_writer`), and they were 6 of that step's 217.
//!
//! The filter is one ncu `--kernel-name` on mangled names, the names a
//! filter of ours is told by:
//! `regex:^(?!((?!.*(nvjet_|sm90_|sm100_)).*(cudnn|...)|^_ZN2at6native|...))`,
//! where the alternatives are `library_kernels::libraries_filter`'s and
//! `framework_filter`'s (the program's own kernels' names kept). A filter
//! of a run from before the libraries were left out has no library part.

use std::ffi::OsString;

use crate::judge::owner::UNSEEN_STORES;
use crate::tools::library_kernels::{
    FRAMEWORK_KERNEL_NAMES, LIBRARY_KERNEL_NAMES, framework_filter, libraries_filter,
    split_alternatives,
};

/// How a filter of ours starts, and the alternatives after it.
const START: &str = "regex:^(?!";
/// NCCL's kernels, by a word every one's mangled name carries.
const NCCL: &str = "nccl";

/// The start of the library part: none of the Hopper and Blackwell
/// names, then one of the libraries' anywhere in the name.
fn library_part_start() -> String {
    format!("(?!.*({})).*(", UNSEEN_STORES.join("|"))
}

/// The options that leave what others wrote out of a profile, less the
/// names the program's own kernels carry (`own`, mangled); none when
/// nothing is left to leave out.
pub fn options(own: &[String]) -> Vec<OsString> {
    let library = libraries_filter(own).map(|l| format!("{}{}", library_part_start(), &l[1..]));
    let framework = framework_filter(own).map(|f| f[1..f.len() - 1].to_string());
    let parts: Vec<String> = library.into_iter().chain(framework).collect();
    if parts.is_empty() {
        return Vec::new();
    }
    vec![
        "--kernel-name-base".into(),
        "mangled".into(),
        "--kernel-name".into(),
        format!("{START}({}))", parts.join("|")).into(),
    ]
}

/// The alternatives of a `--kernel-name` value of ours, without their
/// parentheses; None when the value is not ours (the user's filter).
fn alternatives(value: &str) -> Option<&str> {
    value
        .strip_prefix(START)?
        .strip_suffix(')')?
        .strip_prefix('(')?
        .strip_suffix(')')
}

/// Adds NCCL's kernels to a filter of ours in `argv`; false when `argv`
/// has no filter of ours.
pub fn add_nccl(argv: &mut [OsString]) -> bool {
    let Some(i) = argv.iter().position(|a| a == "--kernel-name") else {
        return false;
    };
    let Some(value) = argv.get(i + 1).and_then(|v| v.to_str()) else {
        return false;
    };
    let Some(inner) = alternatives(value) else {
        return false;
    };
    if !parse(inner).nccl {
        argv[i + 1] = format!("{START}({inner}|{NCCL}))").into();
    }
    true
}

/// What a profiling command's filter of ours leaves out.
#[derive(Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// Names still profiled because the program's own kernels carry
    /// them, by the words a reason names them with.
    pub kept: Vec<&'static str>,
    /// The libraries' kernels left out (but their Hopper ones); false in
    /// a run from before they were.
    pub libraries: bool,
    /// NCCL's kernels left out too.
    pub nccl: bool,
    /// The library part's alternatives, `cudnn|cublas|...`.
    library: Vec<String>,
    /// The other alternatives, `^_ZN2at6native|...`.
    framework: Vec<String>,
}

/// What the filter of ours in `command` leaves out; None without one.
pub fn left_out(command: &[String]) -> Option<LeftOut> {
    let i = command.iter().position(|a| a == "--kernel-name")?;
    Some(parse(alternatives(command.get(i + 1)?)?))
}

/// The parts of a filter of ours, from its alternatives.
fn parse(inner: &str) -> LeftOut {
    let start = library_part_start();
    let (mut library, mut framework) = (Vec::new(), Vec::new());
    let mut libraries = false;
    for part in split_alternatives(inner) {
        match part
            .strip_prefix(start.as_str())
            .and_then(|p| p.strip_suffix(')'))
        {
            Some(names) => {
                libraries = true;
                library.extend(split_alternatives(names).into_iter().map(str::to_string));
            }
            None => framework.push(part.to_string()),
        }
    }
    let absent = |names: &[String], name: &str| !names.iter().any(|n| n == name);
    let kept = FRAMEWORK_KERNEL_NAMES
        .iter()
        .filter(|(name, _)| absent(&framework, name))
        .map(|(_, shown)| *shown)
        .chain(
            LIBRARY_KERNEL_NAMES
                .iter()
                .filter(|name| libraries && absent(&library, name))
                .copied(),
        )
        .collect();
    let nccl = framework.iter().chain(&library).any(|n| n == NCCL);
    LeftOut {
        kept,
        libraries,
        nccl,
        library,
        framework,
    }
}

impl LeftOut {
    /// Whether the filter leaves out a kernel ncu names by `name` (as it
    /// lists those it saw launched, unprofiled). A name it cannot place is
    /// not taken for one left out.
    pub fn leaves_out(&self, name: &str) -> bool {
        let any = |names: &[String]| {
            !names.is_empty()
                && regex::Regex::new(&format!("({})", names.join("|")))
                    .is_ok_and(|re| re.is_match(name))
        };
        any(&self.framework)
            || (any(&self.library) && !UNSEEN_STORES.iter().any(|u| name.contains(u)))
    }

    /// What the stage's reason says of it: `PyTorch's own kernels (ATen's,
    /// torchvision's) and ... not profiled...`.
    pub fn said(&self) -> String {
        let own = if self.kept.is_empty() {
            String::new()
        } else {
            format!(
                " but for names the program's own kernels carry, still profiled ({})",
                self.kept.join(", ")
            )
        };
        let nccl = if self.nccl {
            "; NCCL's kernels left out too, whose collectives would wait on \
             the other processes' under ncu"
        } else {
            ""
        };
        if !self.libraries {
            return format!(
                "PyTorch's own kernels (ATen) not profiled{own}: their coalescing is ATen's code \
                 and gates only under --fail-on warning or --gate-scope all, which profile \
                 them{nccl}"
            );
        }
        format!(
            "PyTorch's own kernels (ATen's, torchvision's) and NVIDIA's libraries' (cuDNN's, \
             cuBLAS's, CUTLASS's) not profiled, but for the libraries' Hopper and Blackwell \
             kernels (nvjet_*, sm90_*, sm100_*), whose stores initcheck cannot see{own}: their \
             coalescing is their own code and gates only under --fail-on warning or \
             --gate-scope all, which profile them{nccl}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(argv: &[OsString]) -> Vec<String> {
        argv.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_filter_is_read_back_from_the_command_with_what_it_keeps_and_nccl() {
        let mut argv = options(&[]);
        let mut command = words(&argv);
        assert_eq!(
            command,
            [
                "--kernel-name-base",
                "mangled",
                "--kernel-name",
                "regex:^(?!((?!.*(nvjet_|sm90_|sm100_)).*(cudnn|cublas|cutlass|xmma|nvjet|fmha|\
                 splitKreduce|gemv2T_kernel|gemv2N_kernel|gemvNSP|gemmSN_|gemmk1_|cufft|nccl|\
                 (ampere|volta|turing|sm80|sm90|sm100)_[a-z0-9]*gemm|implicit_convolve_sgemm|\
                 RNN_blockPersist_|RNN_bidirectional_accum_|persistRNN_|\
                 (LSTM|GRU|GENERIC)_elementWise_)|^_ZN2at6native|^_ZN2at4cuda|^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_|\
                 ^_ZN6vision|^_ZN14at_cuda_detail|\
                 ^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_(RangeFactories|Randperm|Indexing)_cu_))"
            ]
        );
        let filter = left_out(&command).unwrap();
        assert!(filter.kept.is_empty() && filter.libraries && filter.nccl);
        // Real mangled names, from ncu's lists of a Faster R-CNN step and
        // ViT-tiny's (H200, 2026-11-29).
        for gone in [
            "_ZN2at6native29vectorized_elementwise_kernelILi4EEEvv",
            "_ZN5cudnn3cnn24reduce_wgrad_nchw_helperIffEEviiPvPKv",
            "_ZN7cutlass6KernelI44cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4EEvNT_6ParamsE",
            "_ZN8cublasLt19splitKreduce_kernelILi32ELi16EiffffLb0ELb0ELb0ELb0ELb0ELb0EEEv",
            "_ZN6vision3ops51_GLOBAL__N__9a0184f7_13_nms_kernel_cu_494c42a1_438715nms_kernel_implIfEEvidPKT_Py",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            "_ZN14at_cuda_detail3cub6detail4scan23DeviceCompactInitKernelINS0_13ScanTileStateIiLb1EEEPiEEvT_iT0_",
            "_ZN44_GLOBAL__N__50c743a2_11_Indexing_cu_89862edb33indexing_backward_kernel_stride_1IfEEvPKlS2_PKT_PS3_llllb",
        ] {
            assert!(filter.leaves_out(gone), "{gone}");
        }
        for kept in [
            "nvjet_sm90_tst_144x64_64x8_2x4_h_bz_bias_TNN",
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            "_Z15gather_stridedPKfPfi",
            "triton_poi_fused_add_0",
            "vectorized_elementwise_kernel",
        ] {
            assert!(!filter.leaves_out(kept), "{kept}");
        }
        // NCCL's are in the libraries' already.
        assert!(add_nccl(&mut argv));
        assert_eq!(words(&argv), command);
        // A program's own at::native kernel, and its own CUTLASS one, keep
        // those names profiled.
        command = words(&options(&[
            "_ZN2at6native9my_kernelEPf".to_string(),
            "_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE".to_string(),
        ]));
        let said = left_out(&command).unwrap().said();
        assert!(
            said.contains("still profiled (ATen's at::native, cutlass)"),
            "{said}"
        );
        assert!(!said.contains("  "), "{said}");
        // The user's own filter is not ours, and gets no NCCL added.
        let mut user: Vec<OsString> = vec!["--kernel-name".into(), "regex:gemm".into()];
        assert!(!add_nccl(&mut user));
        assert_eq!(left_out(&words(&user)), None);
    }

    #[test]
    fn a_filter_from_before_the_libraries_were_left_out_still_reads() {
        // The filter of the morning of 2026-11-29 (sample-reports/beyond/
        // ncu_framework_filter/), NCCL added for several processes.
        let mut argv: Vec<OsString> = vec![
            "--kernel-name".into(),
            "regex:^(?!(^_ZN2at6native|^_ZN2at4cuda|^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_))"
                .into(),
        ];
        let filter = left_out(&words(&argv)).unwrap();
        assert!(!filter.libraries && !filter.nccl);
        // torchvision's was not in it: profiled then.
        assert_eq!(
            filter.kept,
            vec![
                "torchvision's vision::",
                "PyTorch's CUB",
                "ATen's arange, randperm and indexing"
            ]
        );
        assert!(filter.leaves_out("_ZN2at4cuda3foo"));
        assert!(!filter.leaves_out("_ZN5cudnn3cnn24reduce_wgrad_nchw_helperIffEEviiPvPKv"));
        assert!(
            filter
                .said()
                .starts_with("PyTorch's own kernels (ATen) not profiled")
        );
        assert!(add_nccl(&mut argv));
        let filter = left_out(&words(&argv)).unwrap();
        assert!(filter.nccl && filter.leaves_out("ncclDevKernel_AllGather"));
    }
}
