//! Nsight Compute's command lines: the profiling run (coalescing metrics
//! and the SourceCounters section, one launch per kernel and launch
//! configuration by default) and the imports that turn its report into CSV
//! pages.

use std::ffi::OsString;
use std::path::Path;

/// The metrics ncu collects: requests and 32-byte sectors of global loads
/// and stores, the share of each sector used, and the kernel's duration.
/// The SourceCounters section adds the per-line excessive sectors.
pub const METRICS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,\
smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct,\
gpu__time_duration.sum";

/// Which launches ncu profiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcuOptions {
    /// Most launches profiled with `all_launches`.
    pub launch_cap: u32,
    /// Every launch, not one per kernel and launch configuration.
    pub all_launches: bool,
    /// An ncu kernel filter (`regex:gemm`).
    pub kernel: Option<String>,
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

/// The profiling argv: writes `<report>.ncu-rep`.
pub fn profile_argv(
    ncu: &Path,
    options: &NcuOptions,
    report: &Path,
    program: &[OsString],
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
        "--section".into(),
        "SourceCounters".into(),
        "--import-source".into(),
        "yes".into(),
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
    argv.extend(["-f".into(), "-o".into(), report.into()]);
    argv.extend(program.iter().cloned());
    argv
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
