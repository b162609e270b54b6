//! The program's own kernels whose names a library's carry: the user's
//! code built on CUTLASS (`cutlass::Kernel<TileSum>`), a FlashAttention
//! fork, a GEMM named as cuBLAS names its own (`tiled_gemm`). By name alone
//! racecheck's and synccheck's library filter ([`super::launches`]) leaves
//! such a kernel out, and the judge takes what it does for the library's
//! (tests/gpu/beyond/cutlass_style_race.cu came out CLEAN, its race
//! unseen). Found before the stages in the program's own binaries: the
//! executable of a native program, and the shared objects, cubins and PTX
//! below the project's root and in PyTorch's extension folder (a Python
//! program's extensions). nvcc names each kernel in the host code's stub
//! that launches it, and in the PTX it embeds, so the name is there to read
//! whatever the fatbin's compression ([`collect_names`]). The filter then
//! keeps their names checked, and the report lists them for the judge
//! (`Report::own_kernels`, `judge::own_kernels`).

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

/// What a search stopped at its limits leaves unsaid, in one line: said
/// before the stages and kept among the report's warnings.
pub fn cut_short_warning() -> String {
    format!(
        "the search of the program's binaries for its own kernels stopped at its limits \
         ({} entries below each folder, {} GiB read): a kernel of the program's named like a \
         library's or PyTorch's in a binary left unread stays out of racecheck, synccheck and \
         ncu (--gate-scope all checks every kernel)",
        MAX_ENTRIES,
        MAX_BYTES >> 30
    )
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
/// `root` (None where the source root is refused, `/` or the home folder,
/// as `rundir::snippets::refused_root` says) and below each of `built`
/// (where the program's extensions are built at run time: PyTorch's
/// `load_inline`).
pub fn library_named(
    executable: Option<&Path>,
    root: Option<&Path>,
    built: &[PathBuf],
) -> OwnKernels {
    let mut found = OwnKernels::default();
    let mut binaries: Vec<PathBuf> = executable.map(Path::to_path_buf).into_iter().collect();
    for dir in root.into_iter().chain(built.iter().map(PathBuf::as_path)) {
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
    // A regular file only (a FIFO named like the program would hang the
    // run), through links (`./app` may link to `build/app`).
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let Ok(mut file) = crate::safe_files::open(&real) else {
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
    for rodata in super::elf_rodata::sections(&mut file) {
        collect_registered(&rodata, &mut names);
    }
    Some(names)
}

/// Kernel templates of libraries and frameworks, instantiated in every
/// binary that uses them, whose own code stays theirs: CUB's and Thrust's
/// (header-only), ATen's and c10's (a PyTorch extension's `gpu_kernel`
/// instantiates ATen's `elementwise_kernel`, whose name ATen's own
/// launches share).
const INSTANTIATED_TEMPLATES: [&str; 4] = ["_ZN3cub", "_ZN6thrust", "_ZN2at", "_ZN3c10"];

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Every kernel `bytes` names whose name a framework's or library's
/// carries (`judge::owner` would take it for theirs by its name; every
/// name of racecheck's library filter is one), but
/// [`INSTANTIATED_TEMPLATES`]. A
/// binary holds many more names than its kernels' (a PyTorch extension
/// holds ATen's `c10::aten::_cudnn_rnn`, whose `cudnn` would take cuDNN's
/// kernels out of the filter: seen on the H200), so a name counts only in
/// the forms nvcc gives kernels alone: the host stub that launches it
/// (`_Z37__device_stub__Z10tiled_gemmPKfS0_PfiPKfS0_Pfi`, the kernel's
/// mangled name after `__device_stub_`), and its parameters in the PTX
/// (`_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE_param_0`); and in an ELF
/// file, the names its read-only data holds ([`collect_registered`]).
fn collect_names(bytes: &[u8], out: &mut Vec<String>) {
    for token in tokens(bytes) {
        for kernel in stub_kernels(token).chain(ptx_kernel(token)) {
            keep_library_named(kernel, out);
        }
    }
}

/// Every kernel named in an ELF file's read-only data: the names its host
/// code registers its kernels under, which a stripped binary keeps.
fn collect_registered(rodata: &[u8], out: &mut Vec<String>) {
    for token in tokens(rodata).filter(|t| t.starts_with("_Z")) {
        keep_library_named(token, out);
    }
}

fn keep_library_named(kernel: &str, out: &mut Vec<String>) {
    if !INSTANTIATED_TEMPLATES
        .iter()
        .any(|prefix| kernel.starts_with(prefix))
        && crate::judge::owner::of_kernel(kernel) != cudawatch_model::Owner::User
    {
        out.push(kernel.to_string());
    }
}

fn tokens(bytes: &[u8]) -> impl Iterator<Item = &str> {
    bytes
        .split(|b| !is_name_byte(*b))
        .filter_map(|t| std::str::from_utf8(t).ok())
}

/// The kernels whose host stubs a mangled name names: each
/// `<length>__device_stub_<kernel>` in it, the kernel's mangled name (or
/// its C name after one more `_`) within that identifier's length.
fn stub_kernels(token: &str) -> impl Iterator<Item = &str> {
    const STUB: &str = "__device_stub_";
    token.match_indices(STUB).filter_map(move |(at, _)| {
        let digits = token[..at]
            .bytes()
            .rev()
            .take_while(u8::is_ascii_digit)
            .count();
        let len: usize = token[at - digits..at].parse().ok()?;
        let stubbed = token.get(at + STUB.len()..at.checked_add(len)?)?;
        let kernel = if stubbed.starts_with("_Z") {
            stubbed
        } else {
            stubbed.strip_prefix('_')?
        };
        (!kernel.is_empty()).then_some(kernel)
    })
}

/// The kernel whose PTX parameter a name is (`<kernel>_param_<n>`).
fn ptx_kernel(token: &str) -> Option<&str> {
    let (kernel, n) = token.rsplit_once("_param_")?;
    (!kernel.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(kernel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_read_from_their_stubs_and_ptx_parameters_split_across_reads() {
        let dir = tempfile::tempdir().unwrap();
        // As `strings` read them in sample-reports/beyond/library_named/:
        // the CUTLASS-built kernel's PTX parameter across the end of the
        // first read, its host stub, and the tiled GEMM's stub.
        let param = "_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE_param_0";
        let mut bytes = vec![0u8; (8 << 20) - 10];
        bytes.extend_from_slice(param.as_bytes());
        bytes.extend_from_slice(
            b"\0.text._ZL55__device_stub__ZN7cutlass6KernelI7TileSumEEvNT_6ParamsERN7TileSum6ParamsE\0\
              _Z37__device_stub__Z10tiled_gemmPKfS0_PfiPKfS0_Pfi\0",
        );
        // Names that are no kernel's: ATen's interned symbol a PyTorch
        // extension holds, the kernel's own name alone, a C function
        // imported from cuBLAS, nvcc's wrapper; and kernels that are no
        // library's, or CUB's.
        bytes.extend_from_slice(
            b"\0_ZN3c104atenL10_cudnn_rnnE\0_Z10tiled_gemmPKfS0_Pfi\0cublasCreate_v2\0\
              _ZN7cutlassL29__wrapper__device_stub_KernelI7TileSumEEvRNT_6ParamsE\0\
              _Z31__device_stub__Z9block_sumPKfPfPKfPf\0\
              _Z59__device_stub__ZN3cub17CUB_300000_SM_90011EmptyKernelIvEEvvv\0\
              _ZN2at6native29vectorized_elementwise_kernelILi4EZ3addvEUlfE_EEviT0__param_0\0",
        );
        std::fs::write(dir.path().join("libops.so"), &bytes).unwrap();
        let found = library_named(None, Some(dir.path()), &[]);
        assert_eq!(
            found.names,
            [
                "_Z10tiled_gemmPKfS0_Pfi",
                "_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE"
            ]
        );
        assert_eq!(found.files, [dir.path().join("libops.so")]);
        assert!(!found.cut_short);
    }

    #[test]
    fn a_stripped_binary_names_its_kernels_in_its_read_only_data() {
        // `strip` drops the symbols of nvcc's stubs; the name the host code
        // registers the kernel under stays. ATen's interned symbol in the
        // symbol table is no kernel's.
        let dir = tempfile::tempdir().unwrap();
        let binary = super::super::elf_rodata::elf(
            b"%s: done\0_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE\0",
            b"_ZN3c104atenL10_cudnn_rnnE\0",
        );
        std::fs::write(dir.path().join("app"), binary).unwrap();
        let found = library_named(Some(&dir.path().join("app")), None, &[]);
        assert_eq!(found.names, ["_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE"]);
    }

    #[test]
    fn a_fifo_named_like_the_program_or_a_library_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["app", "libops.so"] {
            let made = std::process::Command::new("mkfifo")
                .arg(dir.path().join(name))
                .status()
                .unwrap();
            assert!(made.success());
        }
        let found = library_named(Some(&dir.path().join("app")), Some(dir.path()), &[]);
        assert_eq!(found, OwnKernels::default());
    }

    #[test]
    fn a_project_past_the_search_limits_is_said_to_be_searched_in_part() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..=MAX_ENTRIES {
            std::fs::write(dir.path().join(format!("f{i}")), b"").unwrap();
        }
        let found = library_named(None, Some(dir.path()), &[]);
        assert!(found.cut_short);
        assert!(
            cut_short_warning()
                .contains("stopped at its limits (20000 entries below each folder, 4 GiB read)"),
            "{}",
            cut_short_warning()
        );
    }

    #[test]
    fn a_c_kernels_stub_and_a_bad_length_are_read_safely() {
        assert_eq!(
            stub_kernels("_Z31__device_stub__flash_fwd_kernelPf").collect::<Vec<_>>(),
            ["flash_fwd_kernel"]
        );
        assert_eq!(stub_kernels("_Z99__device_stub__Z1kv").count(), 0);
        assert_eq!(stub_kernels("__device_stub__Z1kv").count(), 0);
        assert_eq!(ptx_kernel("_Z1kv_param_12"), Some("_Z1kv"));
        assert_eq!(ptx_kernel("_Z1kv_param_"), None);
    }
}
