//! The program's own kernels whose names a library's carry: the user's
//! code built on CUTLASS (`cutlass::Kernel<TileSum>`), a FlashAttention
//! fork, a GEMM named as cuBLAS names its own (`tiled_gemm`). By name alone
//! racecheck's and synccheck's library filter ([`super::launches`]) leaves
//! such a kernel out, and the judge takes what it does for the library's
//! (tests/gpu/beyond/cutlass_style_race.cu came out CLEAN, its race
//! unseen). Found before the stages in the program's own binaries: the
//! executable of a native program, and the shared objects, cubins and PTX
//! below the project's root (a Python program's extensions). The CUDA
//! runtime registers each kernel by its mangled name, a string of the host
//! code, so the name is there to read whatever the fatbin's compression.
//! The filter then keeps their names checked, and the report lists them
//! for the judge (`Report::own_kernels`, `judge::own_kernels`).

use std::io::Read;
use std::path::{Path, PathBuf};

/// What the search found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct OwnKernels {
    /// Mangled names, sorted, at most [`MAX_NAMES`].
    pub names: Vec<String>,
    /// The binary each name was first found in, in order.
    pub files: Vec<PathBuf>,
    /// The search stopped at one of its limits: some binaries unread.
    pub cut_short: bool,
}

const MAX_NAMES: usize = 2000;
/// Directory entries looked at below the root.
const MAX_ENTRIES: usize = 20_000;
const MAX_DEPTH: usize = 8;
/// Bytes read in all: a project's binaries, not its datasets.
const MAX_BYTES: u64 = 4 << 30;
/// Longest name kept whole across two reads (CUTLASS's run to thousands).
const MAX_NAME: usize = 64 << 10;

/// The program's own kernels named like a library's: in `executable` (a
/// native program's, None for an interpreter's), in the binaries below
/// `root` (none when the root is `/` or the home folder, which hold more
/// than a project) and below each of `built` (where the program's
/// extensions are built at run time: PyTorch's `load_inline`).
pub fn library_named(executable: Option<&Path>, root: &Path, built: &[PathBuf]) -> OwnKernels {
    let mut found = OwnKernels::default();
    let mut binaries: Vec<PathBuf> = executable.map(Path::to_path_buf).into_iter().collect();
    let dirs = project_root(root).then_some(root).into_iter();
    for dir in dirs.chain(built.iter().map(PathBuf::as_path)) {
        let mut entries = 0;
        found.cut_short |= !binaries_below(dir, 0, &mut entries, &mut binaries);
    }
    let mut bytes = 0;
    for binary in binaries {
        let before = found.names.len();
        match names_in(&binary, &mut bytes) {
            Some(names) => found.names.extend(names),
            None => found.cut_short = true,
        }
        if found.names.len() > before {
            found.files.push(binary);
        }
    }
    found.names.sort();
    found.names.dedup();
    found.names.truncate(MAX_NAMES);
    found
}

fn project_root(root: &Path) -> bool {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    root.parent().is_some() && home.is_none_or(|h| h.canonicalize().unwrap_or(h) != root)
}

/// Adds the binaries below `dir` to `out`; false when a limit stopped it.
fn binaries_below(dir: &Path, depth: usize, entries: &mut usize, out: &mut Vec<PathBuf>) -> bool {
    let Ok(list) = std::fs::read_dir(dir) else {
        return true;
    };
    for entry in list.flatten() {
        *entries += 1;
        if *entries > MAX_ENTRIES {
            return false;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // Links are not followed: a link may lead out of the project.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && !skipped_dir(&name) {
            if depth + 1 >= MAX_DEPTH {
                continue;
            }
            if !binaries_below(&entry.path(), depth + 1, entries, out) {
                return false;
            }
        } else if kind.is_file() && is_binary_name(&name) {
            out.push(entry.path());
        }
    }
    true
}

/// Folders that hold no binary the user built: hidden ones (`.git`,
/// `.venv`), installed packages, caches, cudawatch's own runs.
fn skipped_dir(name: &str) -> bool {
    name.starts_with('.')
        || matches!(
            name,
            "node_modules" | "site-packages" | "dist-packages" | "__pycache__" | "cudawatch-runs"
        )
}

fn is_binary_name(name: &str) -> bool {
    name.ends_with(".so")
        || name.contains(".so.")
        || name.ends_with(".cubin")
        || name.ends_with(".fatbin")
        || name.ends_with(".ptx")
}

/// The mangled names in `path` that a library filter name matches; None
/// when the byte budget ran out before its end.
fn names_in(path: &Path, bytes: &mut u64) -> Option<Vec<String>> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Some(Vec::new());
    };
    let mut names = Vec::new();
    let mut carry: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 8 << 20];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        *bytes += n as u64;
        if *bytes > MAX_BYTES {
            return None;
        }
        carry.extend_from_slice(&chunk[..n]);
        // The last token may go on in the next read: kept for it.
        let end = carry
            .iter()
            .rposition(|b| !is_name_byte(*b))
            .map_or(0, |i| i + 1);
        collect_names(&carry[..end], &mut names);
        carry.drain(..end);
        if carry.len() > MAX_NAME {
            carry.clear();
        }
    }
    collect_names(&carry, &mut names);
    Some(names)
}

/// Mangled names that are no kernel of the program's: CUB's and Thrust's
/// (below), and what the compiler adds beside a kernel (guard variables,
/// vtables, type information; nvcc's host stubs `__device_stub__` and
/// `__wrapper__device_stub_`, and PTX's `_param_0`, whose names repeat the
/// kernel's).
const NOT_KERNELS: [&[u8]; 6] = [
    b"_ZN3cub",
    b"_ZN6thrust",
    b"_ZGV",
    b"_ZTV",
    b"_ZTI",
    b"_ZTS",
];

fn contains(token: &[u8], part: &[u8]) -> bool {
    token.windows(part.len()).any(|w| w == part)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Every `_Z...` name in `bytes` that a framework's or library's carries
/// (`judge::owner` would take the kernel for theirs by its name; every
/// name of racecheck's library filter is one), but [`NOT_KERNELS`]. CUB
/// and Thrust are header-only libraries, instantiated in every program
/// that uses them, whose own code stays NVIDIA's.
fn collect_names(bytes: &[u8], out: &mut Vec<String>) {
    for token in bytes.split(|b| !is_name_byte(*b)) {
        if token.len() > 4
            && token.starts_with(b"_Z")
            && !NOT_KERNELS.iter().any(|prefix| token.starts_with(prefix))
            && !contains(token, b"device_stub_")
            && !contains(token, b"_param_")
            && let Ok(name) = std::str::from_utf8(token)
            && crate::judge::owner::of_kernel(name) != cudawatch_model::Owner::User
        {
            out.push(name.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_across_reads_and_sections_are_found_whole() {
        let dir = tempfile::tempdir().unwrap();
        let name = "_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE";
        let mut bytes = vec![0u8; (8 << 20) - 10];
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(b"\0.text.");
        bytes.extend_from_slice(name.as_bytes());
        // A kernel named as cuBLAS names its GEMMs, one of the user's of no
        // library's name, a C function imported from cuBLAS, CUB's kernel,
        // and nvcc's host stub and guard variable beside a kernel (as
        // `strings` read them in sample-reports/beyond/library_named/).
        bytes.extend_from_slice(
            b"\0_Z10tiled_gemmPKfS0_Pfi\0_Z10tiled_sumPfi\0cublasCreate_v2\0\
              _ZN3cub17CUB_300000_SM_90011EmptyKernelIvEEvv\0\
              _Z37__device_stub__Z10tiled_gemmPKfS0_PfiPKfS0_Pfi\0\
              _ZGVZ37__device_stub__Z10tiled_gemmPKfS0_PfiPKfS0_PfiE5__tmp\0\
              _ZN7cutlassL29__wrapper__device_stub_KernelI7TileSumEEvRNT_6ParamsE\0\
              _ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE_param_0\0",
        );
        std::fs::write(dir.path().join("libops.so"), &bytes).unwrap();
        let found = library_named(None, dir.path(), &[]);
        assert_eq!(found.names, ["_Z10tiled_gemmPKfS0_Pfi", name]);
        assert_eq!(found.files, [dir.path().join("libops.so")]);
        assert!(!found.cut_short);
    }
}
