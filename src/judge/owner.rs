//! Whose code a finding is in: the user's, the framework's (PyTorch ATen and
//! c10, Inductor's generated kernels, CuPy) or a library's (cuDNN, cuBLAS,
//! CUTLASS, cuRAND, NCCL, ...). Decided, in this order, from the kernel's
//! name, the finding's source file, and the module of the innermost native
//! frame that launched it; anything else is the user's, so an unknown
//! kernel is never waved through. `docs/owners.md` says how each program of
//! the real-workload corpus comes out, and why.

use cudawatch_model::{FindingKind, Frame, Owner, Ownership, Report, Site, Tool};

/// Kernel-name fragments of library kernels, and the library.
const LIBRARY_KERNELS: &[(&str, &str)] = &[
    ("cudnn", "cuDNN"),
    ("engines_precompiled", "cuDNN"),
    ("cnn::", "cuDNN"),
    ("winograd", "cuDNN"),
    ("dgrad", "cuDNN"),
    ("wgrad", "cuDNN"),
    ("fprop", "cuDNN"),
    ("bn_fw_", "cuDNN"),
    ("bn_bw_", "cuDNN"),
    ("fmha", "CUTLASS (PyTorch's bundled attention)"),
    ("flash_", "FlashAttention"),
    ("cutlass", "CUTLASS"),
    ("xmma", "cuBLAS"),
    ("nvjet", "cuBLAS"),
    ("cublas", "cuBLAS"),
    ("gemm", "cuBLAS"),
    ("gemv", "cuBLAS"),
    ("splitkreduce", "cuBLAS"),
    ("epilogue::", "cuBLAS"),
    ("curand", "cuRAND"),
    ("gen_sequenced", "cuRAND"),
    ("generate_seed", "cuRAND"),
    ("nccl", "NCCL"),
    ("cufft", "cuFFT"),
    ("fft_", "cuFFT"),
    ("cusparse", "cuSPARSE"),
    ("cusolver", "cuSOLVER"),
    // cuDNN's runtime-fusion kernels of its attention backward (seen under
    // ViT-tiny's initcheck, issue 21): no `cudnn` in their names.
    ("fusion::compute_dot_do_o", "cuDNN"),
    ("fusion::convert_dq_to_16bits", "cuDNN"),
    // cuDNN's RNN kernels (a GRU's and an LSTM's forward and backward, by
    // PyTorch's profiler, tests/gpu/probes/rnn_kernel_names.py, H200):
    // only the bias steps name `cudnn` in their signatures.
    ("rnn_blockpersist_", "cuDNN"),
    ("rnn_bidirectional_accum_", "cuDNN"),
    ("persistrnn_", "cuDNN"),
    ("lstm_elementwise_", "cuDNN"),
    ("gru_elementwise_", "cuDNN"),
    ("generic_elementwise_", "cuDNN"),
    // CUB and Thrust, and PyTorch's bundled CUB (`at_cuda_detail::`,
    // sample-reports/beyond/library_kernels: torch.sort's radix sort).
    // Without `::`: the mangled name (`_ZN14at_cuda_detail3cub...`) too.
    ("at_cuda_detail", "CUB (PyTorch's copy)"),
    ("cub::", "CUB"),
    ("deviceradixsort", "CUB"),
    ("devicereduce", "CUB"),
    ("devicescan", "CUB"),
    ("devicesegmented", "CUB"),
    ("thrust::", "Thrust"),
];

/// Kernel-name fragments of framework kernels.
const FRAMEWORK_KERNELS: &[(&str, &str)] = &[
    ("at::", "PyTorch ATen"),
    ("c10::", "PyTorch c10"),
    ("triton_poi_fused", "Inductor"),
    ("triton_red_fused", "Inductor"),
    ("triton_per_fused", "Inductor"),
    ("triton_tem_fused", "Inductor"),
    ("cupy_", "CuPy"),
    // ATen kernels in anonymous namespaces, or whose record carries only
    // the simple name.
    ("softmax_warp_", "PyTorch ATen"),
    ("cunn_", "PyTorch ATen"),
    ("reduce_kernel", "PyTorch ATen"),
    ("elementwise_kernel", "PyTorch ATen"),
    ("vectorized_gather_kernel", "PyTorch ATen"),
    ("indexselect", "PyTorch ATen"),
    ("catarraybatchedcopy", "PyTorch ATen"),
    ("nll_loss", "PyTorch ATen"),
    ("max_pool", "PyTorch ATen"),
    ("layer_norm", "PyTorch ATen"),
    // In the anonymous namespaces of ATen's Indexing.cu and Randperm.cu,
    // which the filters leave out by their mangled names
    // (`tools::library_kernels`): a Faster R-CNN step, H200, 2026-11-29.
    ("indexing_backward_kernel", "PyTorch ATen"),
    ("randperm_handle_duplicate_keys", "PyTorch ATen"),
];

/// Shared objects of the frameworks and libraries, by file-name prefix.
const MODULES: &[(&str, Owner, &str)] = &[
    ("libcudnn", Owner::Library, "cuDNN"),
    ("libcublas", Owner::Library, "cuBLAS"),
    ("libnccl", Owner::Library, "NCCL"),
    ("libcufft", Owner::Library, "cuFFT"),
    ("libcurand", Owner::Library, "cuRAND"),
    ("libcusparse", Owner::Library, "cuSPARSE"),
    ("libcusolver", Owner::Library, "cuSOLVER"),
    ("libtorch", Owner::Framework, "PyTorch"),
    ("libc10", Owner::Framework, "PyTorch c10"),
    ("cupy", Owner::Framework, "CuPy"),
];

/// Finding kinds that say something went wrong in the run itself (a fault,
/// an assert, a failed call): a correct program never has them, so they
/// count wherever they happened. The rest (hazards, uninitialised reads,
/// leaks, coalescing) are how library code is written, and count outside
/// the user's code only when the user's own line launched the kernel.
pub fn is_failure(kind: &FindingKind) -> bool {
    !matches!(
        kind,
        FindingKind::Leak
            | FindingKind::UninitializedRead
            | FindingKind::UninitializedCopy
            | FindingKind::UnusedMemory
            | FindingKind::BarrierError
            | FindingKind::Race
            | FindingKind::Hazard
            | FindingKind::GlobalRace
            | FindingKind::UncoalescedAccess
    )
}

/// Library kernels whose global stores initcheck does not see, by name:
/// Hopper and Blackwell builds, which write through the tensor memory
/// accelerator. Measured on the H100 (sample-reports/beyond/gemm_*): every
/// read of what cuBLAS's `nvjet_sm90_*` and cuDNN's `*_sm90_*` attention
/// wrote is "uninitialised"; cuBLAS's `sm80_xmma_*` and cuDNN's sm80-style
/// convolution outputs are seen written.
pub const UNSEEN_STORES: &[&str] = &["nvjet_", "sm90_", "sm100_"];

/// Sets every site's owner, and the doubt on uninitialised reads that
/// may be initcheck's blind spot: launches it was told not to check, or
/// Hopper library kernels.
pub fn assign(report: &mut Report) {
    let doubt = unchecked_launches(report)
        .map(|flags| {
            format!(
                "initcheck was told not to check some launches ({flags}) and does not see what \
                 they write, so a read of it looks uninitialised: this may be one (a warning, \
                 not an error; --fail-on warning gates it; check every launch to know)"
            )
        })
        .or_else(|| {
            unseen_writer(report).map(|writer| {
                format!(
                    "initcheck does not see what Hopper library kernels such as {writer} (run \
                     by this program) write, so a read of their output looks uninitialised: \
                     this may be one (a warning, not an error; --fail-on warning gates it)"
                )
            })
        });
    let own = std::mem::take(&mut report.own_kernels);
    for site in &mut report.findings {
        let mut ownership = of(site);
        if ownership.owner != Owner::User
            && let Some(defined) = defined_by_the_program(site, &own)
        {
            ownership = defined;
        }
        site.doubt = None;
        if let Some(doubt) = &doubt
            && matches!(
                site.kind,
                FindingKind::UninitializedRead | FindingKind::UninitializedCopy
            )
        {
            site.doubt = Some(doubt.clone());
            // A framework's or library's read of a buffer no longer counts
            // as the user's call; severity.rs lowers every doubted read
            // to a warning (the user's own kernel's too: still listed).
            if ownership.owner != Owner::User {
                ownership.user_call = false;
            }
            if let Some(backward) = autograds_stackless_copy(site, &ownership) {
                ownership = backward;
            }
        }
        site.owner = Some(ownership);
    }
    report.own_kernels = own;
}

/// A doubted host copy (one that read what a Hopper library kernel may
/// have written) that a run with host stacks kept no stack for: issued
/// where no Python line was. In every program seen that is autograd's own
/// work in the backward pass, copying a gradient a library kernel wrote:
/// EfficientNet's `ConvolutionBackward0` copies of cuDNN's gradients, a
/// mixture-of-experts block's copies of cuBLAS's (by PyTorch's profiler
/// and the allocator's history, docs/tool-surprises.md). A copy the
/// program asks for keeps its stack and line, from the main thread, a
/// Python thread or a custom `autograd.Function`'s backward
/// (`tests/gpu/probes/copy_threads.py`). Not the user's: folded, listed,
/// not gating. Without the doubt (nothing initcheck cannot see ran) it
/// stays the user's.
fn autograds_stackless_copy(site: &Site, ownership: &Ownership) -> Option<Ownership> {
    let stackless = site.kind == FindingKind::UninitializedCopy && site.stackless_with_stacks;
    (stackless && ownership.owner == Owner::User).then(|| Ownership {
        owner: Owner::Framework,
        component: "autograd's backward (no host stack)".to_string(),
        because: "a run with host call stacks kept none for it: issued where no Python line \
                  was, as autograd's copies of library-written gradients are"
            .to_string(),
        user_call: false,
    })
}

/// The user's, when the program's own binaries define the site's kernel
/// though its name is a library's (`Report::own_kernels`): a kernel built
/// on CUTLASS, a `tiled_gemm`, compiled without line information. A line
/// of a framework's or library's own source still says otherwise.
fn defined_by_the_program(site: &Site, own: &[String]) -> Option<Ownership> {
    if site
        .location
        .as_ref()
        .is_some_and(|l| by_file(&l.file).is_some())
    {
        return None;
    }
    let kernel = site
        .kernel_signature
        .as_deref()
        .or(site.kernel.as_deref())?;
    let mangled = super::own_kernels::defining(own, kernel)?;
    Some(Ownership {
        owner: Owner::User,
        component: "user".to_string(),
        because: format!("the program's own binary defines it ({mangled})"),
        user_call: true,
    })
}

/// The options that left initcheck launches unchecked before or between
/// the checked ones (`--launch-skip 1`, a kernel filter), if any: a
/// correct program's reads of what a skipped launch wrote come out
/// uninitialised (sample-reports/beyond/fill_then_read/).
pub fn unchecked_launches(report: &Report) -> Option<String> {
    report
        .stages
        .iter()
        .find(|s| s.tool == Tool::Initcheck && !s.unchecked_launches.is_empty())
        .map(|s| s.unchecked_launches.join(" "))
}

/// A library kernel this run launched whose stores initcheck cannot see
/// (ncu's measured kernels, the names its console said it was profiling,
/// also when it was stopped before any page, or any finding's kernel), if
/// any.
pub fn unseen_writer(report: &Report) -> Option<&str> {
    let profiled = report.stages.iter().flat_map(|s| {
        s.summary
            .profiled_kernels
            .iter()
            .chain(&s.summary.available_kernels)
            .map(String::as_str)
    });
    let names = report
        .coalescing
        .iter()
        .map(|k| k.kernel.as_str())
        .chain(profiled)
        .chain(report.findings.iter().filter_map(|s| s.kernel.as_deref()));
    names.into_iter().find(|name| {
        let lower = name.to_ascii_lowercase();
        UNSEEN_STORES.iter().any(|f| lower.contains(f))
            && matches!(by_kernel(name), Some((Owner::Library, _, _)))
    })
}

/// The owner of one site.
pub fn of(site: &Site) -> Ownership {
    let found_module = launching_module(&site.host_frames);
    // Memory a framework's or library's allocator holds at exit (PyTorch's
    // caching allocators, cuBLAS's workspace, CuPy's pool) is the pool,
    // not the user's leak, whichever user line first made it grow.
    let pool_at_exit = site.kind == FindingKind::Leak && found_module.is_some();
    let user_call = innermost_python_is_users(&site.host_frames) && !pool_at_exit;
    let found = site
        .kernel_signature
        .as_deref()
        .and_then(by_kernel)
        .or_else(|| site.kernel.as_deref().and_then(by_kernel))
        .map(|named| users_kernel_line(site, &named.1).unwrap_or(named))
        .or_else(|| {
            site.location
                .as_ref()
                .and_then(|l| by_file(&l.file))
                .filter(|_| !inlined_into_a_named_kernel(site))
        })
        .or(found_module)
        .or_else(|| launching_python(&site.host_frames));
    let (owner, component, because) = found.unwrap_or((
        Owner::User,
        "user".to_string(),
        "no framework or library kernel, file or module".to_string(),
    ));
    // initcheck runs without host stacks (their unwinding was 85% of its
    // time), so the user's launching line is unknown. A framework kernel
    // (ATen's reduction, an elementwise op) reads the tensors the program
    // gave it: an uninitialised read there is the program's tensor
    // (`torch.empty`, half filled, summed). Without the stack that would
    // prove otherwise it counts as the user's call; a library's own kernels
    // (cuDNN's layout transforms reading their workspace) do not. Nor does
    // one a run with host stacks kept no stack for: launched where no
    // Python line was (autograd's backward thread), reading what autograd
    // made. A Linear's bias gradient (ATen's reduction over 20,000 rows
    // into 10 outputs) reads the unused lanes of ATen's own staging buffer
    // there: 120 records a step in a correct GNN script
    // (tests/gpu/real/train_gnn.py, tests/gpu/probes/reduce_staging.py,
    // H200). A user's uninitialised tensor is read on the program's own
    // thread too (its forward pass, its optimizer's step), where the stack
    // names its line.
    let unproven_framework_read = site.kind == FindingKind::UninitializedRead
        && owner == Owner::Framework
        && !site.host_frames.iter().any(Frame::is_python)
        && !site.stackless_with_stacks;
    // A race in a library kernel's shared memory, or a barrier its threads
    // miss, is in the kernel's own code, the same whatever arguments the
    // user's line passed it: the library's, never the user's call. So is
    // one in a framework kernel's (ATen's): shared memory is the block's
    // own, and only the kernel's code addresses it. (So racecheck and
    // synccheck may leave both out and hide nothing that gates:
    // tools::library_kernels::LIBRARY_KERNEL_NAMES and
    // FRAMEWORK_KERNEL_NAMES.) A race in a library's global memory too:
    // cuBLAS's and cuDNN's split-K and stream-K kernels order their blocks
    // in ways the global-race tool may not see. In a framework's kernel
    // launched from the user's line a global-memory race is the user's
    // call: overlapping tensors, duplicate indices written at once.
    let in_its_own_shared_memory = matches!(
        site.kind,
        FindingKind::Race | FindingKind::Hazard | FindingKind::BarrierError
    );
    let inside_the_kernel = match owner {
        Owner::Library => in_its_own_shared_memory || site.kind == FindingKind::GlobalRace,
        Owner::Framework => in_its_own_shared_memory,
        Owner::User => false,
    };
    if let Some(scratch) = framework_scratch(site, owner, &component) {
        return scratch;
    }
    Ownership {
        owner,
        component,
        because,
        user_call: (user_call && !inside_the_kernel) || unproven_framework_read,
    }
}

/// A framework kernel's read that initcheck still reported with every
/// tensor PyTorch allocates filled (`Site::read_with_tensors_filled`): it
/// read memory no tensor holds, the kernel's own scratch, never the
/// user's tensor. ATen's reduction over many rows into a number of
/// outputs that is not a multiple of its vector width reads the unused
/// lanes of its staging buffer from the last block to finish
/// (`X.mean(0)` over 80,000 rows of 13 features: 1,470 records, H200,
/// tests/gpu/real/train_tabular.py, tests/gpu/probes/reduce_staging.py).
/// A tensor the program left unwritten (`torch.empty`, half filled) is
/// written by the fill, and its read is gone from that run.
fn framework_scratch(site: &Site, owner: Owner, component: &str) -> Option<Ownership> {
    (site.kind == FindingKind::UninitializedRead
        && site.read_with_tensors_filled
        && filled_by_pytorch(owner, component))
    .then(|| Ownership {
        owner,
        component: format!("{component} (its own scratch memory)"),
        because: "a run with every tensor PyTorch allocates filled still read it \
                      uninitialised: memory no tensor holds"
            .to_string(),
        user_call: false,
    })
}

/// Whether PyTorch's fill of every new tensor speaks for a read in this
/// owner's kernel: PyTorch's own (ATen, c10), whose arguments are
/// tensors PyTorch allocated. Not CuPy's, whose arrays it never fills,
/// nor a library's or the user's.
pub fn filled_by_pytorch(owner: Owner, component: &str) -> bool {
    owner == Owner::Framework && component.starts_with("PyTorch")
}

/// The owner of a kernel by its name alone (coalescing rows have nothing else).
pub fn of_kernel(kernel: &str) -> Owner {
    by_kernel(kernel).map_or(Owner::User, |(owner, _, _)| owner)
}

/// The owner of a source file by its path alone: a framework's or
/// library's (site-packages, the toolkit, Inductor's generated files),
/// else the user's.
pub fn of_file(file: &str) -> Owner {
    by_file(file).map_or(Owner::User, |(owner, _, _)| owner)
}

fn by_kernel(kernel: &str) -> Option<(Owner, String, String)> {
    let lower = kernel.to_ascii_lowercase();
    let name = lower.strip_prefix("void ").unwrap_or(&lower);
    let hit = |table: &[(&str, &str)], owner: Owner| {
        table
            .iter()
            .find(|(fragment, _)| name.contains(fragment))
            .map(|(fragment, component)| {
                (
                    owner,
                    component.to_string(),
                    format!("kernel name contains `{fragment}`"),
                )
            })
    };
    // XLA's generated kernels before the library names: its Triton GEMM
    // fusions (`gemm_fusion_dot_5`) are not cuBLAS's. Then cuDNN's own
    // CUTLASS build (`cutlass__5x_cudnn`) is cuDNN: library names first,
    // cuDNN first among them.
    xla_generated(name)
        .or_else(|| hit(LIBRARY_KERNELS, Owner::Library))
        .or_else(|| hit(FRAMEWORK_KERNELS, Owner::Framework))
        .or_else(|| aten_as_ncu_names_it(name))
        .or_else(|| torchvisions(name))
}

/// torchvision's own CUDA kernels (its detection ops: RoIAlign, RoIPool,
/// batched NMS, deformable convolution), in its `vision::` namespace:
/// `vision::ops::<unnamed>::nms_kernel_impl<float>` as compute-sanitizer
/// names it, `vision::<unnamed>::roi_align_backward_kernel_impl<float>`
/// as ncu does, `_ZN6vision...` mangled (Faster R-CNN's training step,
/// H200, 2026-11-29). Only a name that starts there: `myvision::k` stays
/// its own.
fn torchvisions(name: &str) -> Option<(Owner, String, String)> {
    (name.starts_with("vision::") || name.starts_with("_zn6vision")).then(|| {
        (
            Owner::Framework,
            "torchvision".to_string(),
            "kernel name starts with `vision::` (torchvision's ops)".to_string(),
        )
    })
}

/// XLA's kernels (JAX), as compute-sanitizer and ncu name them
/// (`sample-reports/beyond/jax_step`, H100, 2026-11-25): its fusions are
/// bare symbols named for their root operation (`loop_multiply_fusion`,
/// `input_reduce_select_fusion_2`, `wrapped_broadcast`, `gemm_fusion_dot_5`,
/// `gemm_fusion_dot_general_12`), its runtime's kernels are C++
/// (`stream_executor::RedzoneAllocatorKernelImpl`). Only those shapes: a
/// user's Pallas or Triton kernel is a bare symbol too (`scale_kernel`),
/// and a user's CUDA C++ kernel has a signature.
fn xla_generated(name: &str) -> Option<(Owner, String, String)> {
    let bare = !name.contains('(');
    let (root, numbered) = match name.rsplit_once('_') {
        Some((root, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => (root, true),
        _ => (name, false),
    };
    let fusion =
        (root.starts_with("loop_") || root.starts_with("input_")) && root.ends_with("_fusion");
    let shape = if name.starts_with("stream_executor::") || name.starts_with("xla::") {
        Some("its runtime's namespace")
    } else if bare && (fusion || root.starts_with("gemm_fusion_dot")) {
        Some("a fusion's name")
    } else if bare && root.starts_with("wrapped_") && (numbered || !root[8..].contains('_')) {
        Some("a wrapped operation's name")
    } else {
        None
    };
    shape.map(|shape| {
        (
            Owner::Framework,
            "XLA (JAX)".to_string(),
            format!("kernel name `{name}` has the shape of XLA's: {shape}"),
        )
    })
}

/// ncu names some of ATen's kernels without their outer namespace: `void
/// native::<unnamed>::embedding_backward_feature_kernel<float, float,
/// long>(...)` beside `void at::native::reduce_kernel<...>` in the same
/// profile (Hugging Face's Trainer, H100, 2026-11-25). Only a name that
/// starts there is ATen's; `mylib::native::k` stays its own.
fn aten_as_ncu_names_it(name: &str) -> Option<(Owner, String, String)> {
    name.starts_with("native::").then(|| {
        (
            Owner::Framework,
            "PyTorch ATen".to_string(),
            "kernel name starts with `native::` (ncu's name for at::native)".to_string(),
        )
    })
}

/// A device record placed on a line of the user's own source, whatever its
/// kernel is named: the line came from the module's own line information,
/// which cuDNN's and cuBLAS's kernels never carry, so the kernel was
/// compiled from the user's code. A user's `tiled_gemm` is named as cuBLAS
/// names its own kernels (`*gemm*`), a kernel built on CUTLASS is
/// `cutlass::Kernel<...>`: a race, a barrier error or an uninitialised
/// read in one is the user's to fix, and gates (sample-reports/beyond/
/// library_named/). Only the records of the tools that read the kernel's
/// line table: a host-side line (an API call's, a Python traceback's)
/// says who called, not whose kernel it was.
fn users_kernel_line(site: &Site, named_for: &str) -> Option<(Owner, String, String)> {
    let location = site.location.as_ref()?;
    let device_record = matches!(
        site.tool,
        Tool::Memcheck | Tool::Racecheck | Tool::Initcheck | Tool::Synccheck | Tool::GlobalRace
    );
    (device_record && is_users_source(&location.file)).then(|| {
        (
            Owner::User,
            "user".to_string(),
            format!(
                "its line information names {}, though its name is like {named_for}'s",
                location.file
            ),
        )
    })
}

/// Whether a source file a kernel's line information names is the user's:
/// below the project's root (`./kernels/gemm.cu`), or a path no framework
/// or library owns (as compiled: `kernels/gemm.cu`, `/home/me/gemm.cu`),
/// outside installed packages, the frameworks' caches of generated code
/// (`Frame::is_framework_python`) and the temporary folder, where
/// frameworks compile the kernels they generate (CuPy's
/// `/tmp/tmpXXXX/<hash>.cubin.cu`, whose user-written ones
/// `rundir::runtime_sources` moves to the user's Python line first). A
/// bare base name (a text log's `gemm.cu`) proves nothing.
pub fn is_users_source(file: &str) -> bool {
    cudawatch_model::in_project(file).is_some()
        || (file.contains('/')
            && by_file(file).is_none()
            && !Frame::is_framework_python(file)
            && !file.starts_with("/tmp/")
            && !file.contains("dist-packages/"))
}

/// A line of CUDA's own headers (libcu++'s atomics, cooperative groups,
/// intrinsics) in a kernel whose name is no framework's or library's: the
/// header's code was inlined into that kernel, whose author chose it, and
/// ncu's source page places it there (`cuda_ptx_generated.h:2367` for
/// `cuda::atomic_ref::fetch_add`, sample-reports/outside/libcu_atomics/).
fn inlined_into_a_named_kernel(site: &Site) -> bool {
    site.kernel.is_some()
        && site.location.as_ref().is_some_and(|l| {
            l.file.starts_with("/usr/local/cuda") || l.file.contains("/cuda/include/")
        })
}

fn by_file(file: &str) -> Option<(Owner, String, String)> {
    let because = || format!("source file {file}");
    if file.contains("/aten/src/") || file.contains("/c10/") {
        Some((Owner::Framework, "PyTorch ATen".into(), because()))
    } else if file.contains("site-packages/torch/") {
        Some((Owner::Framework, "PyTorch".into(), because()))
    } else if file.contains("site-packages/triton/") {
        Some((Owner::Framework, "Triton".into(), because()))
    } else if file.contains("/torchinductor_") {
        // Inductor's generated kernels (`/tmp/torchinductor_USER/..`), the
        // file their line information names.
        Some((Owner::Framework, "Inductor".into(), because()))
    } else if file.starts_with("/usr/local/cuda") || file.contains("/cuda/include/") {
        Some((Owner::Library, "CUDA toolkit".into(), because()))
    } else {
        None
    }
}

/// The module of the innermost native frame outside the CUDA runtime: what
/// called the launch (or the failing API).
fn launching_module(frames: &[Frame]) -> Option<(Owner, String, String)> {
    let frame = frames.iter().find(|f| !f.is_python() && !f.is_runtime())?;
    let module = frame.module.as_deref()?;
    let base = module.rsplit('/').next().unwrap_or(module);
    MODULES
        .iter()
        .find(|(prefix, _, _)| base.starts_with(prefix))
        .map(|(_, owner, component)| (*owner, *component))
        .or_else(|| {
            // Extension modules are named for their own file
            // (`runtime.cpython-312-x86_64-linux-gnu.so`); their package
            // says whose they are.
            PACKAGES
                .iter()
                .find(|(dir, _, _)| module.contains(dir))
                .map(|(_, owner, component)| (*owner, *component))
        })
        .map(|(owner, component)| {
            (
                owner,
                component.to_string(),
                format!("launched from {base}"),
            )
        })
}

/// PyTorch, when its own Python code launched the kernel: ncu's call stack
/// holds only Python frames and the innermost is torch's. FSDP's all-gather
/// copy-out (`split_with_sizes_copy_out_contiguous_no_cast_kernel`, which
/// ncu names `detail::...` without ATen's namespace) is launched from
/// `torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py` under the
/// user's forward call (two H200s, 2026-11-26). Only torch's: Triton's and
/// CuPy's Python launch the user's own kernels (`triton/backends/nvidia/
/// driver.py` is the innermost frame of every `@triton.jit` launch), which
/// stay the user's.
fn launching_python(frames: &[Frame]) -> Option<(Owner, String, String)> {
    let innermost = frames.iter().find(|f| f.is_python())?;
    let file = innermost.file.as_deref()?;
    let short = file.split_once("site-packages/torch/")?.1;
    Some((
        Owner::Framework,
        "PyTorch".to_string(),
        format!("launched from torch/{short}"),
    ))
}

/// Package directories of frameworks' and libraries' extension modules.
const PACKAGES: &[(&str, Owner, &str)] = &[
    ("site-packages/torch/", Owner::Framework, "PyTorch"),
    ("site-packages/cupy/", Owner::Framework, "CuPy"),
    ("site-packages/cupy_backends/", Owner::Framework, "CuPy"),
    ("site-packages/triton/", Owner::Framework, "Triton"),
    ("site-packages/nvidia/", Owner::Library, "NVIDIA library"),
];

/// Whether the innermost Python frame is a file of the user's (an absolute
/// path outside site-packages, or one under the project, `./train.py`):
/// the user's line called the framework op that launched the kernel, with
/// nothing of the framework's Python between. Bare base names (the text
/// output's `conv.py`) prove nothing.
fn innermost_python_is_users(frames: &[Frame]) -> bool {
    frames
        .iter()
        .find(|f| f.is_python())
        .and_then(|f| f.file.as_deref())
        .is_some_and(|file| {
            (file.starts_with('/') || cudawatch_model::in_project(file).is_some())
                && !Frame::is_framework_python(file)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_of_the_real_corpus_get_their_owners() {
        for (kernel, owner) in [
            (
                "void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false, (cudnnKernelDataType_t)2>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>, const T1 *, T1 *)",
                Owner::Library,
            ),
            (
                "sm90_xmma_dgrad_implicit_gemm_indexed_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel__5x_cudnn",
                Owner::Library,
            ),
            ("fmha_cutlassF_f32_aligned_64x64_rf_sm80", Owner::Library),
            (
                "void cutlass__5x_cudnn::Kernel<conv::ImplicitGemmConvolution>",
                Owner::Library,
            ),
            (
                "void gen_sequenced<curandStateXORWOW, float, int>",
                Owner::Library,
            ),
            (
                "void at::reduce_kernel<128, 4, at::ReduceOp<float>>",
                Owner::Framework,
            ),
            (
                "void <unnamed>::softmax_warp_forward<float, float, float, 4, false, false>",
                Owner::Framework,
            ),
            ("triton_per_fused_sum_0", Owner::Framework),
            (
                "void native::<unnamed>::embedding_backward_feature_kernel<float, float, long>(const T3 *, const T1 *, T1 *, int, long, int)",
                Owner::Framework,
            ),
            ("void mylib::native::scale(float *)", Owner::User),
            // torchvision's, as ncu and compute-sanitizer name them
            // (Faster R-CNN's training step, H200, 2026-11-29).
            (
                "void vision::<unnamed>::roi_align_backward_kernel_impl<float>(int, const T1 *, double, int, int, int, int, int, int, int, T1 *, const T1 *, int, int, int, int)",
                Owner::Framework,
            ),
            (
                "void vision::ops::(anonymous namespace)::nms_kernel_impl<float>(int, double, const T1 *, unsigned long long *)",
                Owner::Framework,
            ),
            (
                "_ZN6vision3ops51_GLOBAL__N__9a0184f7_13_nms_kernel_cu_494c42a1_438715nms_kernel_implIfEEvidPKT_Py",
                Owner::Framework,
            ),
            ("void myvision::roi_align(float *)", Owner::User),
            (
                "void at_cuda_detail::DeviceRadixSortHistogramKernel<at_cuda_detail::policy_hub<long, cub::OpaqueType<8>, unsigned long long>::Policy1000, 0, long, unsigned long long, at_cuda_detail::identity_decomposer_t>(T4 *, const T3 *, T4, int, int, T5)",
                Owner::Library,
            ),
            ("DeviceRadixSortOnesweepKernel", Owner::Library),
            ("fusion::compute_dot_do_o_specialized", Owner::Library),
            ("fusion::convert_dq_to_16bits", Owner::Library),
            ("reduce_kernel", Owner::Framework),
            ("scaled_relu", Owner::User),
            ("block_sum", Owner::User),
            ("oob_write(int *, int)", Owner::User),
        ] {
            assert_eq!(of_kernel(kernel), owner, "{kernel}");
        }
    }

    #[test]
    fn an_uninitialised_read_in_a_framework_kernel_without_a_host_stack_is_the_users_call() {
        // initcheck without host stacks: ATen's reduction reading a
        // half-filled torch.empty buffer (tests/gpu/real/empty_then_reduce.py)
        // was "inside the framework, not gating" and the run CLEAN.
        let mut site = cudawatch_parsers::site::new_site(
            cudawatch_model::Tool::Initcheck,
            FindingKind::UninitializedRead,
            cudawatch_model::Severity::Error,
            "Uninitialized __global__ memory read of size 4 bytes".into(),
        );
        site.kernel =
            Some("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>".into());
        let framework = of(&site);
        assert_eq!(framework.owner, Owner::Framework);
        assert!(framework.user_call, "{framework:?}");
        site.kernel = Some("void cudnn::engines_precompiled::nhwcToNchwKernel<float>".into());
        let library = of(&site);
        assert_eq!(library.owner, Owner::Library);
        assert!(
            !library.user_call,
            "a library's own read is not the user's: {library:?}"
        );
    }

    #[test]
    fn a_doubted_copy_a_run_with_host_stacks_kept_no_stack_for_is_autograds() {
        // EfficientNet's and a mixture-of-experts block's copies on the
        // H200: device to device in the backward pass, reading gradients a
        // Hopper library kernel wrote, no host stack even asked for.
        let copy = |stackless: bool| {
            let mut site = cudawatch_parsers::site::new_site(
                cudawatch_model::Tool::Initcheck,
                FindingKind::UninitializedCopy,
                cudawatch_model::Severity::Error,
                "a CUDA API call (a copy or a set) read device memory nothing wrote".into(),
            );
            site.stackless_with_stacks = stackless;
            site
        };
        let mut report = Report::new("t");
        report.findings = vec![copy(true), copy(false)];
        let owners = |report: &Report| -> Vec<(Owner, bool)> {
            report
                .findings
                .iter()
                .map(|s| s.owner.as_ref().map(|o| (o.owner, o.user_call)).unwrap())
                .collect()
        };
        // Nothing initcheck cannot see ran: both stay the user's.
        assign(&mut report);
        assert_eq!(
            owners(&report),
            [(Owner::User, false), (Owner::User, false)]
        );
        // cuBLAS's Hopper GEMM ran: the stackless one is autograd's, the
        // one whose stack was never sought stays the user's.
        report.coalescing.push(cudawatch_model::KernelCoalescing {
            kernel: "nvjet_sm90_tst_96x128_64x7_2x1_v_bz_TNN".into(),
            ..Default::default()
        });
        assign(&mut report);
        assert_eq!(
            owners(&report),
            [(Owner::Framework, false), (Owner::User, false)]
        );
        let backward = report.findings[0].owner.as_ref().unwrap();
        assert!(backward.component.contains("autograd"), "{backward:?}");
    }

    #[test]
    fn a_framework_read_still_made_with_every_tensor_filled_is_its_own_scratch() {
        // ATen's reduction at the user's `X.mean(0)` (train_tabular.py):
        // launched from the user's line, so the user's call, until the
        // run with every tensor filled reads the same memory uninitialised.
        let read = |kernel: &str, again: bool| {
            let mut site = cudawatch_parsers::site::new_site(
                cudawatch_model::Tool::Initcheck,
                FindingKind::UninitializedRead,
                cudawatch_model::Severity::Error,
                "Uninitialized __global__ memory read of size 4 bytes".into(),
            );
            site.kernel = Some(kernel.into());
            site.host_frames = vec![Frame {
                func: Some("<module>".into()),
                file: Some("/home/u/train_tabular.py".into()),
                line: Some(27),
                module: None,
                pc: None,
            }];
            site.read_with_tensors_filled = again;
            site
        };
        let owner = |site: &Site| {
            let o = of(site);
            (o.owner, o.user_call)
        };
        assert_eq!(
            owner(&read("reduce_kernel", false)),
            (Owner::Framework, true)
        );
        let scratch = of(&read("reduce_kernel", true));
        assert_eq!(
            (scratch.owner, scratch.user_call),
            (Owner::Framework, false)
        );
        assert!(scratch.component.contains("scratch"), "{scratch:?}");
        // The user's own kernel is the user's whatever the rerun saw, and
        // CuPy's stays the user's call: the fill covers PyTorch's tensors,
        // not the user's own allocations nor CuPy's arrays.
        assert_eq!(owner(&read("my_kernel", true)), (Owner::User, true));
        assert_eq!(owner(&read("cupy_add", true)), (Owner::Framework, true));
    }

    #[test]
    fn cudnns_rnn_kernels_are_cudnns_though_their_names_do_not_say_so() {
        // As PyTorch's profiler named them for a GRU and an LSTM (H200):
        // train_ctc.py's bidirectional GRU read was the user's warning.
        for kernel in [
            "void RNN_bidirectional_accum_bp1_1<float, float, float>(float*, float*, float*, int)",
            "void RNN_blockPersist_fp_GRU<float, float, float, 128>(float const*, float*)",
            "void LSTM_elementWise_bp1<float, float, float>(int, int, float*)",
            "void GRU_elementWise_bp1<float, float, float>(int, int, float*)",
            "void persistRNN_addBias<float, float>(cudnnRNNMode_t, int, int, float*, float*)",
        ] {
            assert_eq!(
                by_kernel(kernel).map(|(o, c, _)| (o, c)),
                Some((Owner::Library, "cuDNN".to_string())),
                "{kernel}"
            );
        }
        assert_eq!(of_kernel("my_rnn_step"), Owner::User);
    }

    #[test]
    fn a_framework_read_a_run_with_host_stacks_kept_no_stack_for_is_not_the_users_call() {
        // A Linear's bias gradient in a correct GNN script: ATen's
        // reduction on autograd's thread, whose records the rerun with host
        // stacks kept no stack for (tests/gpu/real/train_gnn.py, H200).
        let mut site = cudawatch_parsers::site::new_site(
            cudawatch_model::Tool::Initcheck,
            FindingKind::UninitializedRead,
            cudawatch_model::Severity::Error,
            "Uninitialized __global__ memory read of size 4 bytes".into(),
        );
        site.kernel = Some("reduce_kernel".into());
        site.stackless_with_stacks = true;
        let backward = of(&site);
        assert_eq!(backward.owner, Owner::Framework);
        assert!(!backward.user_call, "{backward:?}");
        // With a stack naming the user's line it is the user's call again.
        site.host_frames = vec![Frame {
            file: Some("./train.py".into()),
            line: Some(12),
            ..Frame::default()
        }];
        assert!(of(&site).user_call);
    }

    #[test]
    fn reads_after_a_hopper_library_kernel_are_doubted_and_no_longer_the_users_call() {
        let read = |kernel: &str| {
            let mut site = cudawatch_parsers::site::new_site(
                cudawatch_model::Tool::Initcheck,
                FindingKind::UninitializedRead,
                cudawatch_model::Severity::Error,
                "Uninitialized __global__ memory read of size 16 bytes".into(),
            );
            site.kernel = Some(kernel.into());
            site
        };
        let mut report = Report::new("t");
        report.findings = vec![
            read(
                "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>>",
            ),
            read("scaled_relu"),
        ];
        // No kernel of this run is one whose stores initcheck misses.
        assign(&mut report);
        assert!(report.findings.iter().all(|s| s.doubt.is_none()));
        assert!(report.findings[0].owner.as_ref().unwrap().user_call);
        // cuBLAS's Hopper GEMM ran (ncu profiled it).
        report.coalescing.push(cudawatch_model::KernelCoalescing {
            kernel: "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_NNT".into(),
            ..Default::default()
        });
        assign(&mut report);
        let (aten, user) = (&report.findings[0], &report.findings[1]);
        assert!(
            aten.doubt.as_deref().unwrap().contains("nvjet_sm90"),
            "{aten:?}"
        );
        assert!(!aten.owner.as_ref().unwrap().user_call, "{aten:?}");
        assert!(user.doubt.is_some(), "{user:?}");
        assert_eq!(user.owner.as_ref().unwrap().owner, Owner::User);
        // An ATen kernel with `sm90` in no name, or an sm80 GEMM, is seen.
        report.coalescing[0].kernel = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n".into();
        assign(&mut report);
        assert!(report.findings.iter().all(|s| s.doubt.is_none()));
    }

    #[test]
    fn xlas_kernels_are_the_frameworks_and_a_users_pallas_kernel_stays_the_users() {
        // Names from sample-reports/beyond/jax_step and jax_pallas_accumulate.
        for name in [
            "loop_multiply_fusion",
            "input_reduce_select_fusion",
            "input_reduce_fusion_2",
            "gemm_fusion_dot_5",
            "gemm_fusion_dot_general_12",
            "wrapped_broadcast",
            "wrapped_iota",
            "void stream_executor::xla_fp_comparison<float>(T1 *, T1 *, float, unsigned long, int *)",
            "stream_executor::RedzoneAllocatorKernelImpl(unsigned char *, unsigned char, unsigned long, unsigned int *)",
        ] {
            let (owner, component, _) = by_kernel(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(
                (owner, component.as_str()),
                (Owner::Framework, "XLA (JAX)"),
                "{name}"
            );
        }
        for name in [
            "scale_kernel",
            "loop_fusion(float *, int)",
            "my_fusion",
            "wrapped_user_kernel",
        ] {
            assert_eq!(of_kernel(name), Owner::User, "{name}");
        }
    }

    #[test]
    fn a_kernel_launched_from_a_frameworks_python_is_the_frameworks() {
        // FSDP's all-gather copy-out as ncu named it on two H200s: no
        // namespace of ATen's, only Python frames, the innermost FSDP's.
        let python = |file: &str, line: u32| Frame {
            file: Some(file.into()),
            line: Some(line),
            ..Frame::default()
        };
        let mut site = cudawatch_parsers::site::new_site(
            Tool::Ncu,
            FindingKind::UncoalescedAccess,
            cudawatch_model::Severity::Warning,
            "uncoalesced".into(),
        );
        site.kernel = Some(
            "detail::split_with_sizes_copy_out_contiguous_no_cast_kernel(char **, char **, \
             long *, long *, long *, long, long)"
                .into(),
        );
        site.host_frames = vec![
            python(
                "/venv/lib/python3.12/site-packages/torch/distributed/fsdp/_fully_shard/\
                 _fsdp_collectives.py",
                210,
            ),
            python("/home/u/fsdp_step.py", 20),
        ];
        let owned = of(&site);
        assert_eq!(owned.owner, Owner::Framework, "{}", owned.because);
        assert_eq!(owned.component, "PyTorch");
        // The user's own kernel called from the user's line stays theirs,
        // and so does a user's Triton kernel, which Triton's Python launches.
        site.kernel = Some("scale_rows(float *, int, float)".into());
        site.host_frames = vec![python("/home/u/train.py", 36)];
        assert_eq!(of(&site).owner, Owner::User);
        site.kernel = Some("fill".into());
        site.host_frames = vec![
            python(
                "/venv/lib/python3.12/site-packages/triton/backends/nvidia/driver.py",
                529,
            ),
            python("/home/u/triton_hidden_oob.py", 19),
        ];
        assert_eq!(of(&site).owner, Owner::User);
    }

    #[test]
    fn the_users_own_line_launching_a_framework_kernel_is_a_user_call() {
        let python = |file: &str| Frame {
            file: Some(file.into()),
            line: Some(9),
            ..Frame::default()
        };
        let native = |module: &str| Frame {
            func: Some("at::native::gpu_reduce_kernel".into()),
            module: Some(module.into()),
            ..Frame::default()
        };
        let torch = "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so";
        let direct = [native(torch), python("/home/u/train.py")];
        assert!(innermost_python_is_users(&direct));
        let through_torch = [
            native(torch),
            python("/venv/lib/python3.12/site-packages/torch/nn/functional.py"),
            python("/home/u/train.py"),
        ];
        assert!(!innermost_python_is_users(&through_torch));
        assert!(!innermost_python_is_users(&[python("conv.py")]));
        // As the report names a file under the project it ran in.
        assert!(innermost_python_is_users(&[
            native(torch),
            python("./train.py")
        ]));
        let venv_in_project = "./.venv/lib/python3.12/site-packages/torch/nn/functional.py";
        assert!(!innermost_python_is_users(&[
            native(torch),
            python(venv_in_project)
        ]));
        assert_eq!(
            launching_module(&direct).map(|(o, c, _)| (o, c)),
            Some((Owner::Framework, "PyTorch".to_string()))
        );
    }

    /// The owner of a `kind` record in `kernel`, launched straight from
    /// the user's `./train.py:12`.
    fn launched_from_the_users_line(kernel: &str, kind: FindingKind) -> Ownership {
        let mut site = cudawatch_parsers::site::new_site(
            Tool::Racecheck,
            kind,
            cudawatch_model::Severity::Error,
            String::new(),
        );
        site.kernel = Some(kernel.into());
        site.host_frames = vec![Frame {
            file: Some("./train.py".into()),
            line: Some(12),
            ..Frame::default()
        }];
        of(&site)
    }

    #[test]
    fn a_race_inside_a_library_kernel_is_never_the_users_call_but_its_bad_read_is() {
        // cuBLAS's GEMM launched straight from the user's line: an
        // uninitialised read there is the tensor the user passed, a race
        // in its shared memory is cuBLAS's own code.
        let site = |kind: FindingKind| {
            launched_from_the_users_line(
                "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32",
                kind,
            )
        };
        for kind in [
            FindingKind::Race,
            FindingKind::Hazard,
            FindingKind::BarrierError,
            FindingKind::GlobalRace,
        ] {
            let who = site(kind.clone());
            assert_eq!(who.owner, Owner::Library, "{kind:?}");
            assert!(!who.user_call, "{kind:?}");
        }
        assert!(site(FindingKind::UninitializedRead).user_call);
    }

    #[test]
    fn a_race_in_atens_shared_memory_is_atens_but_one_in_the_tensors_it_was_given_is_the_callers() {
        // ATen's reduction launched straight from the user's `x.sum()`:
        // its shared memory is its own code's (racecheck and synccheck
        // leave ATen out), the tensors it writes are the user's.
        let site = |kind: FindingKind| {
            launched_from_the_users_line("void at::native::reduce_kernel<512, 1>", kind)
        };
        for kind in [
            FindingKind::Race,
            FindingKind::Hazard,
            FindingKind::BarrierError,
        ] {
            let who = site(kind.clone());
            assert_eq!(who.owner, Owner::Framework, "{kind:?}");
            assert!(!who.user_call, "{kind:?}");
        }
        for kind in [FindingKind::GlobalRace, FindingKind::UninitializedRead] {
            assert!(site(kind.clone()).user_call, "{kind:?}");
        }
    }

    #[test]
    fn a_record_on_a_line_of_the_users_source_is_the_users_whatever_the_kernels_name() {
        let record = |tool: Tool, kind: FindingKind, kernel: &str, file: Option<&str>| {
            let mut site = cudawatch_parsers::site::new_site(
                tool,
                kind,
                cudawatch_model::Severity::Error,
                String::new(),
            );
            site.kernel = Some(kernel.into());
            site.location = file.map(|f| cudawatch_model::SourceLocation {
                file: f.into(),
                line: 10,
            });
            of(&site)
        };
        for (tool, kind) in [
            (Tool::GlobalRace, FindingKind::GlobalRace),
            (Tool::Racecheck, FindingKind::Race),
            (Tool::Racecheck, FindingKind::Hazard),
            (Tool::Synccheck, FindingKind::BarrierError),
            (Tool::Initcheck, FindingKind::UninitializedRead),
        ] {
            // The user's tiled GEMM, and a kernel built on CUTLASS's
            // wrapper, compiled with line information: the user's.
            for (kernel, file) in [
                ("tiled_gemm", "./kernels/gemm.cu"),
                ("tiled_gemm", "kernels/gemm.cu"),
                (
                    "void cutlass::Kernel<TileSum>(T1::Params)",
                    "/home/me/op.cu",
                ),
            ] {
                let who = record(tool, kind.clone(), kernel, Some(file));
                assert_eq!(who.owner, Owner::User, "{kernel} {kind:?}");
            }
            // cuBLAS's own kernel carries no line information.
            assert_eq!(
                record(tool, kind.clone(), "tiled_gemm", None).owner,
                Owner::Library
            );
            // Generated code and installed packages are not the user's:
            // Inductor's kernels name its generated files, CuPy's its
            // temporary ones, a wheel's its build tree below site-packages.
            for (kernel, file, owner) in [
                (
                    "triton_poi_fused_add_0",
                    "/tmp/torchinductor_root/ab/cabcdef.py",
                    Owner::Framework,
                ),
                ("cupy_add", "/tmp/tmpab12/6f0e.cubin.cu", Owner::Framework),
                (
                    "triton_per_fused_sum_1",
                    "/home/me/.cache/torch/inductor/xy/cxyz.py",
                    Owner::Framework,
                ),
                (
                    "flash_fwd_kernel",
                    "/usr/lib/python3/dist-packages/flash_attn/csrc/flash_fwd.h",
                    Owner::Library,
                ),
                ("gemm_kernel", "gemm.cu", Owner::Library),
            ] {
                let who = record(tool, kind.clone(), kernel, Some(file));
                assert_eq!(who.owner, owner, "{kernel} {file} {kind:?}");
            }
        }
        // A host-side line says who called, not whose kernel it was.
        assert_eq!(
            record(
                Tool::Plain,
                FindingKind::ApiError,
                "tiled_gemm",
                Some("./main.cu")
            )
            .owner,
            Owner::Library
        );
    }

    #[test]
    fn a_kernel_the_programs_binary_defines_is_the_users_without_line_information() {
        // tests/gpu/beyond/cutlass_style_race.cu built without -lineinfo:
        // racecheck names the kernel, and no line.
        let mut report = Report::new("t");
        let mut site = cudawatch_parsers::site::new_site(
            Tool::Racecheck,
            FindingKind::Race,
            cudawatch_model::Severity::Error,
            String::new(),
        );
        site.kernel = Some("Kernel".into());
        site.kernel_signature = Some("void cutlass::Kernel<TileSum>(T1::Params)".into());
        report.findings.push(site);
        assign(&mut report);
        let owner = |report: &Report| report.findings[0].owner.clone().unwrap();
        assert_eq!(owner(&report).owner, Owner::Library);
        report.own_kernels = vec!["_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE".into()];
        assign(&mut report);
        assert_eq!(owner(&report).owner, Owner::User, "{:?}", owner(&report));
        assert_eq!(report.own_kernels.len(), 1);
        // cuBLAS's CUTLASS kernel in the same program stays cuBLAS's.
        report.findings[0].kernel_signature = Some(
            "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(T1::Params)"
                .into(),
        );
        report.findings[0].kernel = Some("Kernel2".into());
        assign(&mut report);
        assert_eq!(owner(&report).owner, Owner::Library);
    }
}
