//! Finding compute-sanitizer and ncu: the flag or `CUDAWATCH_*` variable,
//! then PATH, then `$CUDA_HOME/bin` and `/usr/local/cuda/bin`.

use std::path::{Path, PathBuf};

/// Where the tools are.
#[derive(Debug, Clone)]
pub struct ToolPaths {
    /// compute-sanitizer.
    pub compute_sanitizer: PathBuf,
    /// ncu.
    pub ncu: PathBuf,
}

impl ToolPaths {
    /// Uses the paths given (flags and variables, already resolved) and
    /// looks for the others. A tool found nowhere keeps its bare name, so
    /// spawning it fails with a clear error and its stage is inconclusive.
    pub fn resolve(compute_sanitizer: Option<&Path>, ncu: Option<&Path>) -> ToolPaths {
        ToolPaths {
            compute_sanitizer: compute_sanitizer
                .map_or_else(|| find_tool("compute-sanitizer"), Path::to_path_buf),
            ncu: ncu.map_or_else(|| find_tool("ncu"), Path::to_path_buf),
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
