//! The global-race stage's tool (`native/global-race/`): found where a
//! user or a checkout put it, else built on this machine from the sources
//! cudawatch carries, once, into its cache. Built here and not shipped
//! prebuilt: the library links the Sanitizer API of the compute-sanitizer
//! it runs beside, and its device patches must suit the toolkit's GPUs, so
//! a `pip install`ed cudawatch builds it with the machine's own nvcc and
//! compute-sanitizer (16 s on a 2-core machine, 6 architectures).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::supervisor::bounded;
use crate::tools::ToolPaths;

/// A library the user built or moved elsewhere: used as it is.
pub const LIBRARY_VARIABLE: &str = "CUDAWATCH_GLOBAL_RACE_LIB";

/// The library's file name, in every place it is looked for.
const LIBRARY: &str = "libglobal-race.so";

/// The sources, as `native/global-race/` holds them: the build script
/// decides how they are built, here and in a checkout alike.
const SOURCES: &[(&str, &str)] = &[
    (
        "build.sh",
        include_str!("../../native/global-race/build.sh"),
    ),
    (
        "global_race.cpp",
        include_str!("../../native/global-race/global_race.cpp"),
    ),
    (
        "patches.cu",
        include_str!("../../native/global-race/patches.cu"),
    ),
    (
        "shadow.h",
        include_str!("../../native/global-race/shadow.h"),
    ),
    (
        "simulation.h",
        include_str!("../../native/global-race/simulation.h"),
    ),
];

/// nvcc for six architectures takes 16 s on a loaded 2-core machine; a
/// build still going after this is stuck.
const BUILD_LIMIT: Duration = Duration::from_secs(600);

/// Where the tool stands on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// Ready: the library.
    Built(PathBuf),
    /// Not built yet, and everything its build needs is here.
    Buildable(Recipe),
    /// Neither: what is missing, and what to do about it.
    Unavailable {
        /// What is in the way.
        what: String,
        /// The user's remedy.
        fix: String,
    },
}

/// What a build uses, and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// The CUDA compiler, for the device patches.
    pub nvcc: PathBuf,
    /// The host C++ compiler, for the library.
    pub cxx: PathBuf,
    /// The compute-sanitizer folder with the API's `include/` and
    /// `libsanitizer-public.so`.
    pub api: PathBuf,
    /// The folder the build fills: one per sources and tools.
    pub dir: PathBuf,
}

/// The library, found or built now; else why the stage cannot run, in
/// one line a user can act on. `python` is the program's, whose PyPI
/// compute-sanitizer ([`super::pypi_sanitizer`]) may hold a newer API
/// than the toolkit's; `note` is told before a build starts (seconds).
pub fn find_or_build(
    tools: &ToolPaths,
    python: Option<&Path>,
    note: impl FnOnce(&str),
) -> Result<PathBuf, String> {
    match locate(tools, python) {
        Located::Built(library) => Ok(library),
        Located::Unavailable { what, fix } => Err(format!("{what}; {fix}")),
        Located::Buildable(recipe) => {
            note(&format!(
                "building the global-race tool from cudawatch's sources with {} and the \
                 Sanitizer API in {}: once, kept in {}",
                recipe.nvcc.display(),
                recipe.api.display(),
                recipe.dir.display()
            ));
            build(&recipe)
        }
    }
}

/// Where the tool stands, first to last: the variable; beside cudawatch's
/// executable, where `native/global-race/build.sh` puts it in a checkout
/// (`target/global-race/` beside `target/release/`); built before into the
/// cache; or what building it needs.
pub fn locate(tools: &ToolPaths, python: Option<&Path>) -> Located {
    if let Some(path) = std::env::var_os(LIBRARY_VARIABLE) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Located::Built(path)
        } else {
            Located::Unavailable {
                what: format!(
                    "{LIBRARY_VARIABLE} names {}, which is not a file",
                    path.display()
                ),
                fix: format!(
                    "point it at a {LIBRARY} that native/global-race/build.sh built, or unset \
                     it for cudawatch to build one"
                ),
            }
        };
    }
    if let Some(library) = beside_executable() {
        return Located::Built(library);
    }
    match recipe(tools, python) {
        Ok(recipe) if built(&recipe.dir) => Located::Built(recipe.dir.join(LIBRARY)),
        Ok(recipe) => Located::Buildable(recipe),
        Err((what, fix)) => Located::Unavailable { what, fix },
    }
}

fn beside_executable() -> Option<PathBuf> {
    let dir = std::env::current_exe().ok()?.parent()?.to_path_buf();
    [dir.join("global-race"), dir.join("../global-race")]
        .into_iter()
        .find(|d| built(d))
        .map(|d| d.join(LIBRARY))
}

/// A finished build: both files (a build is moved into place whole).
fn built(dir: &Path) -> bool {
    dir.join(LIBRARY).is_file() && dir.join("patches.fatbin").is_file()
}

/// What a build here would use, or what is missing. The API is the
/// newest at hand, the tool having been run with 2026.4's: racecheck's
/// compute-sanitizer (a newer one named or pip installed), the program's
/// Python's from PyPI, then the toolkit's.
fn recipe(tools: &ToolPaths, python: Option<&Path>) -> Result<Recipe, (String, String)> {
    let cannot = |what: &str, fix: &str| {
        (
            format!("the global-race tool is not built and cannot be built here: {what}"),
            format!("{fix}, or set {LIBRARY_VARIABLE} to a {LIBRARY} built elsewhere"),
        )
    };
    let sanitizers = [
        tools.racecheck_sanitizer.as_ref().map(|(p, _)| p.clone()),
        python.and_then(super::pypi_sanitizer::installed),
        Some(tools.compute_sanitizer.clone()),
    ];
    let api = sanitizers
        .iter()
        .flatten()
        .find_map(|s| api_folder(s))
        .ok_or_else(|| {
            cannot(
                "no compute-sanitizer with the Sanitizer API's include/ and libsanitizer-public.so",
                "install the CUDA toolkit or pip install nvidia-cuda-sanitizer-api",
            )
        })?;
    let nvcc = super::find_nvcc(tools).ok_or_else(|| {
        cannot(
            "no nvcc",
            "install the CUDA toolkit (nvcc) or put nvcc on PATH",
        )
    })?;
    let cxx = std::env::var_os("CXX")
        .and_then(|c| crate::executables::resolve(Path::new(&c)))
        .or_else(|| crate::executables::on_path("g++"))
        .or_else(|| crate::executables::on_path("c++"))
        .ok_or_else(|| cannot("no C++ compiler (g++, c++ or $CXX)", "install g++"))?;
    let key = fingerprint(&[&nvcc, &cxx, &api.join("libsanitizer-public.so")]);
    let dir = super::cache::dir().join("global-race").join(key);
    Ok(Recipe {
        nvcc,
        cxx,
        api,
        dir,
    })
}

/// The folder holding a compute-sanitizer's API: beside the executable
/// (PyPI's wheel, the toolkit's `compute-sanitizer/`), or the toolkit's
/// `compute-sanitizer/` when the path is its `bin/` launcher.
fn api_folder(sanitizer: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(sanitizer).ok()?;
    let dir = real.parent()?;
    [dir.to_path_buf(), dir.join("../compute-sanitizer")]
        .into_iter()
        .find(|d| {
            d.join("include/sanitizer.h").is_file() && d.join("libsanitizer-public.so").is_file()
        })
}

/// A name for the build of these sources with these tools: FNV-1a over
/// them (stable from one cudawatch to the next, unlike std's hasher), so
/// a changed source or another toolkit builds anew beside the old. Each
/// tool by its real path, size and time: `/usr/local/cuda` moved to a new
/// release, or `pip install -U nvidia-cuda-sanitizer-api` in place, is
/// another tool.
fn fingerprint(tools: &[&Path]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes.iter().chain([0u8].iter()) {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for (name, text) in SOURCES {
        feed(name.as_bytes());
        feed(text.as_bytes());
    }
    for tool in tools {
        let real = std::fs::canonicalize(tool).unwrap_or_else(|_| tool.to_path_buf());
        feed(real.as_os_str().as_encoded_bytes());
        if let Ok(meta) = std::fs::metadata(&real) {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            feed(format!("{} {modified}", meta.len()).as_bytes());
        }
    }
    format!("{hash:016x}")
}

/// Builds into a folder of its own, then moves it into place whole: two
/// runs building at once (a sweep's targets) each finish with a complete
/// tool, and an interrupted build leaves nothing that looks built.
fn build(recipe: &Recipe) -> Result<PathBuf, String> {
    let parent = recipe.dir.parent().unwrap_or(Path::new("."));
    remove_abandoned_builds(parent);
    let staging = parent.join(format!(
        "{}.building-{}",
        recipe.dir.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let log = recipe.dir.with_extension("log");
    let result = build_in(recipe, &staging, &log);
    let _ = std::fs::remove_dir_all(&staging);
    result
}

/// Staging folders whose cudawatch is gone (killed mid-build: SIGKILL,
/// the machine's OOM killer), so they do not pile up in the cache. A live
/// one is another run's build in progress, left alone.
fn remove_abandoned_builds(cache: &Path) {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.rsplit_once(".building-").map(|(_, pid)| pid) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn build_in(recipe: &Recipe, staging: &Path, log: &Path) -> Result<PathBuf, String> {
    let failed = |what: String| format!("building the global-race tool failed: {what}");
    let src = staging.join("src");
    std::fs::create_dir_all(&src)
        .map_err(|e| failed(format!("cannot create {}: {e}", src.display())))?;
    for (name, text) in SOURCES {
        std::fs::write(src.join(name), text)
            .map_err(|e| failed(format!("cannot write {}: {e}", src.join(name).display())))?;
    }
    let out = staging.join("out");
    let bash = crate::executables::on_path("bash").unwrap_or_else(|| PathBuf::from("/bin/bash"));
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let (api, nvcc, cxx) = (text(&recipe.api), text(&recipe.nvcc), text(&recipe.cxx));
    let ran = bounded::capture_interruptible(
        &bash,
        &[
            src.join("build.sh").into_os_string(),
            out.clone().into_os_string(),
        ],
        &[("SANITIZER_DIR", &api), ("NVCC", &nvcc), ("CXX", &cxx)],
        BUILD_LIMIT,
    )
    .ok_or_else(|| failed(format!("{} could not be started", bash.display())))?;
    let _ = std::fs::write(log, &ran.output);
    if !ran.succeeded() || !built(&out) {
        let how = if ran.interrupted {
            "interrupted (Ctrl-C)".to_string()
        } else if ran.timed_out {
            format!("still running after {} s", BUILD_LIMIT.as_secs())
        } else {
            bounded::last_line(&ran.output).to_string()
        };
        return Err(failed(format!("{how} (its output: {})", log.display())));
    }
    // Another run may have put its build there first: either is whole.
    if std::fs::rename(&out, &recipe.dir).is_err() && !built(&recipe.dir) {
        return Err(failed(format!(
            "cannot move it into {}",
            recipe.dir.display()
        )));
    }
    Ok(recipe.dir.join(LIBRARY))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_toolkit_or_source_builds_anew_beside_the_old() {
        let a = fingerprint(&[Path::new("/cuda-13.0/bin/nvcc"), Path::new("/usr/bin/g++")]);
        let b = fingerprint(&[Path::new("/cuda-13.1/bin/nvcc"), Path::new("/usr/bin/g++")]);
        assert_ne!(a, b);
        assert_eq!(a.len(), 16);
        // The same tools give the same name, run after run.
        assert_eq!(
            a,
            fingerprint(&[Path::new("/cuda-13.0/bin/nvcc"), Path::new("/usr/bin/g++")])
        );
    }

    #[test]
    fn the_api_is_found_beside_pypis_executable_and_the_toolkits_launcher() {
        let tmp = tempfile::tempdir().unwrap();
        let api = |dir: &Path| {
            std::fs::create_dir_all(dir.join("include")).unwrap();
            std::fs::write(dir.join("include/sanitizer.h"), "").unwrap();
            std::fs::write(dir.join("libsanitizer-public.so"), "").unwrap();
        };
        // PyPI's wheel: nvidia/cu13/compute-sanitizer/compute-sanitizer.
        let pypi = tmp.path().join("pypi/compute-sanitizer");
        api(&pypi);
        std::fs::write(pypi.join("compute-sanitizer"), "").unwrap();
        let found = api_folder(&pypi.join("compute-sanitizer")).unwrap();
        assert_eq!(found.canonicalize().unwrap(), pypi.canonicalize().unwrap());
        // The toolkit's: bin/compute-sanitizer, the API in compute-sanitizer/.
        let toolkit = tmp.path().join("cuda");
        api(&toolkit.join("compute-sanitizer"));
        std::fs::create_dir_all(toolkit.join("bin")).unwrap();
        std::fs::write(toolkit.join("bin/compute-sanitizer"), "").unwrap();
        let found = api_folder(&toolkit.join("bin/compute-sanitizer")).unwrap();
        assert_eq!(
            found.canonicalize().unwrap(),
            toolkit.join("compute-sanitizer").canonicalize().unwrap()
        );
        // A header without the library is no API.
        std::fs::remove_file(toolkit.join("compute-sanitizer/libsanitizer-public.so")).unwrap();
        assert_eq!(api_folder(&toolkit.join("bin/compute-sanitizer")), None);
    }

    #[test]
    fn a_sanitizer_upgraded_in_place_is_another_tool() {
        let tmp = tempfile::tempdir().unwrap();
        let lib = tmp.path().join("libsanitizer-public.so");
        std::fs::write(&lib, "2026.4").unwrap();
        let before = fingerprint(&[&lib]);
        assert_eq!(before, fingerprint(&[&lib]));
        std::fs::write(&lib, "2026.5, a larger library").unwrap();
        assert_ne!(before, fingerprint(&[&lib]));
    }

    #[test]
    fn a_build_abandoned_by_a_dead_cudawatch_is_removed_and_a_live_ones_kept() {
        let cache = tempfile::tempdir().unwrap();
        let dead = cache.path().join("0123456789abcdef.building-4294967295");
        let live = cache
            .path()
            .join(format!("0123456789abcdef.building-{}", std::process::id()));
        let built = cache.path().join("0123456789abcdef");
        for dir in [&dead, &live, &built] {
            std::fs::create_dir_all(dir.join("src")).unwrap();
        }
        remove_abandoned_builds(cache.path());
        assert!(!dead.exists());
        assert!(live.exists() && built.exists());
    }
}
