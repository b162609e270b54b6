//! Finding compute-sanitizer and ncu: the flag or `CUDAWATCH_*` variable,
//! then PATH, then `$CUDA_HOME/bin` and `/usr/local/cuda/bin`.

use std::path::{Path, PathBuf};

use cudawatch_model::Tool;

/// Where the tools are.
#[derive(Debug, Clone)]
pub struct ToolPaths {
    /// compute-sanitizer.
    pub compute_sanitizer: PathBuf,
    /// ncu.
    pub ncu: PathBuf,
    /// The cuda-gdb that reads GPU core dumps: `cuda-gdb-minimal` where
    /// there is one (the full cuda-gdb 13.0 was seen crashing on dumps),
    /// else `cuda-gdb`; `None` when neither was found (the dump's stage then
    /// says only what the driver printed).
    pub cuda_gdb: Option<PathBuf>,
    /// Tools found nowhere, each with the one line that says where
    /// cudawatch looked: their stages are not started.
    pub missing: Vec<(PathBuf, String)>,
    /// compute-sanitizer's release (`2026.4.0.0`), when it was asked (a
    /// run asks it through doctor's quick look, before its plan): what its
    /// options can be trusted to do depends on it.
    pub sanitizer_version: Option<String>,
    /// The compute-sanitizer of the racecheck stage alone
    /// (`--racecheck-sanitizer`) and its release, when one was given.
    pub racecheck_sanitizer: Option<(PathBuf, Option<String>)>,
    /// A newer compute-sanitizer pip installed in the program's Python
    /// (`doctor::pypi_sanitizer`) and its release, found when the toolkit's
    /// cannot leave library kernels out: the stages that leave them out
    /// (racecheck, synccheck: `sanitizer::launches`) run under it.
    pub pypi_sanitizer: Option<(PathBuf, String)>,
    /// The global-race tool's library, found or built for this run
    /// (`doctor::global_race_tool`), or why there is none; `None` when the
    /// run did not look (the stage was not selected).
    pub global_race: Option<Result<PathBuf, String>>,
}

impl ToolPaths {
    /// The compute-sanitizer that runs `tool`'s stage, and its release:
    /// racecheck's own where one was named, then PyPI's for the stages that
    /// leave library kernels out with it, then the toolkit's.
    pub fn sanitizer_for(&self, tool: Tool) -> (&Path, Option<&str>) {
        let pypi = self
            .pypi_sanitizer
            .as_ref()
            .filter(|_| crate::tools::sanitizer::LIBRARY_FILTERED.contains(&tool))
            .map(|(path, version)| (path.as_path(), Some(version.as_str())));
        match &self.racecheck_sanitizer {
            Some((path, version)) if tool == Tool::Racecheck => (path, version.as_deref()),
            _ => pypi.unwrap_or((&self.compute_sanitizer, self.sanitizer_version.as_deref())),
        }
    }
}

/// `(2026, 4)` from a tool's version, `2026.4.0.0`: year and release,
/// as NVIDIA numbers compute-sanitizer's and ncu's releases.
pub fn release(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

impl ToolPaths {
    /// Why `executable` cannot be run, when it was found nowhere.
    pub fn missing(&self, executable: &Path) -> Option<&str> {
        self.missing
            .iter()
            .find(|(name, _)| name == executable)
            .map(|(_, why)| why.as_str())
    }
}

impl ToolPaths {
    /// Uses the paths given (flags and variables, already resolved) and
    /// looks for the others. A tool found nowhere keeps its bare name, so
    /// spawning it fails with a clear error and its stage is inconclusive.
    pub fn resolve(compute_sanitizer: Option<&Path>, ncu: Option<&Path>) -> ToolPaths {
        let mut missing = Vec::new();
        let mut find = |given: Option<&Path>, name: &str, remedy: &str| {
            match given {
            Some(path) => path.to_path_buf(),
            None => find_tool(name).unwrap_or_else(|| {
                missing.push((
                    PathBuf::from(name),
                    format!(
                        "{name} was not found on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin; {remedy}"
                    ),
                ));
                PathBuf::from(name)
            }),
        }
        };
        let compute_sanitizer = find(
            compute_sanitizer,
            "compute-sanitizer",
            "install the CUDA toolkit or pass --compute-sanitizer / CUDAWATCH_COMPUTE_SANITIZER",
        );
        let ncu = find(
            ncu,
            "ncu",
            "install Nsight Compute or pass --ncu / CUDAWATCH_NCU",
        );
        ToolPaths {
            compute_sanitizer,
            ncu,
            cuda_gdb: find_tool("cuda-gdb-minimal").or_else(|| find_tool("cuda-gdb")),
            missing,
            sanitizer_version: None,
            racecheck_sanitizer: None,
            pypi_sanitizer: None,
            global_race: None,
        }
    }
}

/// nvdisasm, which gives a module's SASS with its line table: PATH, then
/// `$CUDA_HOME/bin` and `/usr/local/cuda/bin`.
pub fn nvdisasm() -> Option<PathBuf> {
    find_tool("nvdisasm")
}

fn find_tool(name: &str) -> Option<PathBuf> {
    let mut extra = Vec::new();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        extra.push(Path::new(&home).join("bin"));
    }
    extra.push(PathBuf::from("/usr/local/cuda/bin"));
    crate::executables::find_in_path(name, &extra)
}
