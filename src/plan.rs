//! What each stage runs: argv, environment and artifact names. Pure: no
//! processes, no files; the supervisor executes a plan.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use cudawatch_parsers::model::Tool;

use crate::cli::{RunArgs, StageName};

/// compute-sanitizer's exit code when it found errors, chosen to be unlikely
/// as a program's own (1, 2 and 255 are common; signals give 128+n).
pub const SANITIZER_ERROR_EXITCODE: &str = "86";

/// The metrics ncu collects: requests and 32-byte sectors of global loads
/// and stores, the share of each sector used, and the kernel's duration.
/// The SourceCounters section adds the per-line excessive sectors.
pub const NCU_METRICS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,\
smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct,\
gpu__time_duration.sum";

/// One stage: a process to run and what to call its outputs.
#[derive(Debug, Clone)]
pub struct Stage {
    /// The tool.
    pub tool: Tool,
    /// Full command line, tool first.
    pub argv: Vec<OsString>,
    /// Variables to set.
    pub env: Vec<(String, String)>,
    /// Variables to remove.
    pub env_remove: Vec<String>,
    /// The stage's folder in the run directory (`memcheck`, `ncu`, ...).
    pub dir: String,
}

/// Where the tools are.
#[derive(Debug, Clone)]
pub struct ToolPaths {
    /// compute-sanitizer.
    pub compute_sanitizer: PathBuf,
    /// ncu.
    pub ncu: PathBuf,
}

impl ToolPaths {
    /// Flags and `CUDAWATCH_*` variables first (clap has read both), then
    /// PATH, then `$CUDA_HOME/bin` and `/usr/local/cuda/bin`. A tool found
    /// nowhere keeps its bare name, so spawning it fails with a clear error
    /// and the stage is inconclusive.
    pub fn resolve(args: &RunArgs) -> ToolPaths {
        ToolPaths {
            compute_sanitizer: args
                .compute_sanitizer
                .clone()
                .unwrap_or_else(|| find_tool("compute-sanitizer")),
            ncu: args.ncu.clone().unwrap_or_else(|| find_tool("ncu")),
        }
    }
}

fn find_tool(name: &str) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        dirs.push(Path::new(&home).join("bin"));
    }
    dirs.push(PathBuf::from("/usr/local/cuda/bin"));
    dirs.into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Whether the program is a Python process (its allocator needs turning off
/// under the sanitizers).
pub fn is_python(program: &[OsString]) -> bool {
    let Some(first) = program.first() else {
        return false;
    };
    let base = Path::new(first)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    [
        "python",
        "pytest",
        "torchrun",
        "accelerate",
        "deepspeed",
        "ipython",
    ]
    .iter()
    .any(|p| base.starts_with(p))
        || base.ends_with(".py")
        || program
            .get(1)
            .is_some_and(|a| a.to_string_lossy().ends_with(".py"))
}

/// The stages `args` asks for, in order.
pub fn stages(args: &RunArgs, paths: &ToolPaths, run_dir: &Path) -> Vec<Stage> {
    let python = is_python(&args.program);
    args.stages
        .iter()
        .map(|s| stage(*s, args, paths, run_dir, python))
        .collect()
}

fn stage(
    name: StageName,
    args: &RunArgs,
    paths: &ToolPaths,
    run_dir: &Path,
    python: bool,
) -> Stage {
    let program = args.program.clone();
    let tool = match name {
        StageName::Plain => Tool::Plain,
        StageName::Memcheck => Tool::Memcheck,
        StageName::Racecheck => Tool::Racecheck,
        StageName::Initcheck => Tool::Initcheck,
        StageName::Synccheck => Tool::Synccheck,
        StageName::Ncu => Tool::Ncu,
    };
    let dir = tool.name().to_string();
    let mut env = vec![("CUDAWATCH_STAGE".to_string(), tool.name().to_string())];
    let mut env_remove = Vec::new();
    let argv: Vec<OsString> = match tool {
        Tool::Plain => {
            env.push(("CUDA_LAUNCH_BLOCKING".into(), "1".into()));
            program
        }
        Tool::Ncu => {
            let mut argv: Vec<OsString> = vec![
                paths.ncu.clone().into(),
                "--target-processes".into(),
                "all".into(),
                // Sector and request counts do not depend on clocks, and
                // leaving them alone needs no permission to lock them.
                "--clock-control".into(),
                "none".into(),
                "--metrics".into(),
                NCU_METRICS.into(),
                "--section".into(),
                "SourceCounters".into(),
                "--import-source".into(),
                "yes".into(),
            ];
            if args.ncu_all_launches {
                argv.extend([
                    "--launch-count".into(),
                    args.ncu_launch_cap.to_string().into(),
                ]);
            } else {
                argv.extend([
                    "--filter-mode".into(),
                    "per-launch-config".into(),
                    "--launch-count".into(),
                    "1".into(),
                ]);
            }
            if let Some(filter) = &args.ncu_kernel {
                argv.extend(["--kernel-name".into(), filter.into()]);
            }
            argv.extend([
                "-f".into(),
                "-o".into(),
                run_dir.join(&dir).join("profile").into_os_string(),
            ]);
            argv.extend(program);
            argv
        }
        _ => {
            if python && !args.keep_caching_allocator {
                env.push(("PYTORCH_NO_CUDA_MEMORY_CACHING".into(), "1".into()));
                // Expandable segments cause false out-of-bounds reports
                // (pytorch#196209); drop only that option.
                match std::env::var("PYTORCH_CUDA_ALLOC_CONF") {
                    Ok(conf) if conf.contains("expandable_segments") => {
                        let kept: Vec<&str> = conf
                            .split(',')
                            .filter(|o| !o.trim().starts_with("expandable_segments"))
                            .collect();
                        if kept.is_empty() {
                            env_remove.push("PYTORCH_CUDA_ALLOC_CONF".into());
                        } else {
                            env.push(("PYTORCH_CUDA_ALLOC_CONF".into(), kept.join(",")));
                        }
                    }
                    _ => {}
                }
            }
            let mut argv: Vec<OsString> = vec![
                paths.compute_sanitizer.clone().into(),
                "--tool".into(),
                tool.name().into(),
                "--xml".into(),
                "--save".into(),
                run_dir
                    .join(&dir)
                    .join(format!("{}.xml", tool.name()))
                    .into_os_string(),
                "--print-limit".into(),
                "0".into(),
                "--error-exitcode".into(),
                SANITIZER_ERROR_EXITCODE.into(),
                "--target-processes".into(),
                "all".into(),
            ];
            if tool == Tool::Memcheck {
                argv.extend(["--leak-check".into(), "full".into()]);
            }
            if let Some(file) = &args.sanitizer_suppressions {
                argv.extend(["--suppressions".into(), file.clone().into_os_string()]);
            }
            argv.extend(program);
            argv
        }
    };
    Stage {
        tool,
        argv,
        env,
        env_remove,
        dir,
    }
}

/// The ncu imports that turn a profile into CSV pages: (file name, argv).
pub fn ncu_imports(ncu: &Path, profile: &Path) -> Vec<(String, Vec<OsString>)> {
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

/// The source page of one launch.
pub fn ncu_source_import(ncu: &Path, profile: &Path, launch: u64) -> (String, Vec<OsString>) {
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
    fn python_programs_are_recognised_by_interpreter_or_script() {
        let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(is_python(&os(&["python3", "train.py"])));
        assert!(is_python(&os(&["/usr/bin/python3.12", "-m", "pytest"])));
        assert!(is_python(&os(&["./train.py"])));
        assert!(!is_python(&os(&["./oob_write"])));
    }
}
