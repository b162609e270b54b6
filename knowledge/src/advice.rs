//! cudawatch's own advice: the usual causes of an error and what to run
//! next. The tables say what a code is; this says what usually makes it
//! happen in real programs and which cudawatch stage finds the root cause.
//! `PROGRAM` in a command stands for the user's program.

/// What usually causes an error, and what to run next.
#[derive(Debug, Clone, Copy)]
pub struct Advice {
    /// The usual causes, most likely first.
    pub causes: &'static [&'static str],
    /// The stage that finds the root cause (`memcheck`, `doctor`, ...).
    pub stage: &'static str,
    /// The exact command.
    pub next: &'static str,
}

const MEMORY_FAULT: Advice = Advice {
    causes: &[
        "a kernel read or wrote outside an allocation: an index past the end, a wrong stride, a negative offset",
        "a pointer used after cudaFree (or after PyTorch freed the tensor), or a host pointer passed to a kernel",
        "in PyTorch, the error is reported at a later, unrelated line: kernels run asynchronously",
    ],
    stage: "memcheck",
    next: "cudawatch run --stages plain,memcheck -- PROGRAM",
};
const ASSERT: Advice = Advice {
    causes: &[
        "a device-side assert failed: in PyTorch usually an index out of range (embedding, gather, index_select, a class label outside [0, C) in cross_entropy/nll_loss)",
        "an assert() in your own kernel",
    ],
    stage: "plain",
    next: "cudawatch run --stages plain,memcheck -- PROGRAM",
};
const TIMEOUT: Advice = Advice {
    causes: &[
        "a kernel ran past the display watchdog (a GPU that also drives a display)",
        "a kernel that never ends: a loop whose exit depends on a race, or threads waiting at a barrier that others never reach",
    ],
    stage: "racecheck",
    next: "cudawatch run --stages plain,racecheck,synccheck -- PROGRAM",
};
const RESOURCES: Advice = Advice {
    causes: &[
        "too many threads per block for the registers each thread uses",
        "more shared memory per block than the GPU allows without opting in",
    ],
    stage: "plain",
    next: "nvcc --resource-usage (or lower the block size), then: cudawatch run --stages plain -- PROGRAM",
};
const OOM: Advice = Advice {
    causes: &[
        "the program needs more memory than is free: a batch too large, activations kept for backward",
        "other processes hold GPU memory (a stray earlier run)",
        "fragmentation in PyTorch's caching allocator (reserved but unallocated memory is large): PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, which the memory stage tries for you",
        "each step keeps the last one's tensors (losses.append(loss) keeps the graph): the memory stage's growth finding names the line",
        "JAX: XLA reserves 75% of the GPU at start (XLA_PYTHON_CLIENT_PREALLOCATE=false or XLA_PYTHON_CLIENT_MEM_FRACTION change that) and keeps every live array; the memory stage watches PyTorch only, jax.profiler.save_device_memory_profile shows what held XLA's",
    ],
    stage: "memory",
    next: "cudawatch run --stages plain,memory -- PROGRAM (what held the memory at the OOM, by your line)",
};
const DRIVER: Advice = Advice {
    causes: &[
        "the driver is older than the CUDA runtime the program (or PyTorch wheel) was built with",
        "a container or module that shadows the driver's libcuda",
    ],
    stage: "doctor",
    next: "cudawatch doctor",
};
const NO_IMAGE: Advice = Advice {
    causes: &[
        "the binary (or PyTorch wheel) was not built for this GPU's compute capability",
        "an extension built with TORCH_CUDA_ARCH_LIST that leaves this GPU out",
    ],
    stage: "doctor",
    next: "cudawatch doctor (the GPU's compute capability against the architectures PyTorch was built for)",
};
const NO_DEVICE: Advice = Advice {
    causes: &[
        "CUDA_VISIBLE_DEVICES hides every GPU, or names one that does not exist",
        "the driver is not loaded, or the container was started without GPUs",
    ],
    stage: "doctor",
    next: "cudawatch doctor",
};
const INIT: Advice = Advice {
    causes: &[
        "the driver could not be initialised: not loaded, or mismatched with the kernel module",
        "CUDA used in a process forked after CUDA was initialised (DataLoader workers with fork)",
        "CUDA called while the process exits",
    ],
    stage: "doctor",
    next: "cudawatch doctor",
};
const BAD_ARGUMENT: Advice = Advice {
    causes: &[
        "a launch configuration out of range: more than 1024 threads per block, a zero-sized grid",
        "a size, pointer or enum argument the call does not accept",
    ],
    stage: "memcheck",
    next: "cudawatch run --stages plain,memcheck -- PROGRAM",
};
const HARDWARE: Advice = Advice {
    causes: &[
        "a hardware fault (uncorrectable ECC error, NVLink error); see nvidia-smi -q and the kernel log",
    ],
    stage: "doctor",
    next: "cudawatch doctor, then nvidia-smi -q -d ECC",
};
const LIBRARY_AFTER_FAULT: Advice = Advice {
    causes: &[
        "an earlier kernel faulted and left the context broken: the library call is only where it surfaced",
        "bad pointers or dimensions passed to the library",
    ],
    stage: "memcheck",
    next: "cudawatch run --stages plain,memcheck -- PROGRAM",
};
const LIBRARY_ARGUMENT: Advice = Advice {
    causes: &[
        "a dimension, leading dimension, stride or data type the call does not accept",
        "tensors that are not contiguous, or of mismatched dtypes, passed to a library call",
    ],
    stage: "plain",
    next: "cudawatch run --stages plain -- PROGRAM",
};
const LIBRARY_ALLOC: Advice = Advice {
    causes: &[
        "the library could not allocate its workspace or handle: the GPU is (nearly) out of memory",
    ],
    stage: "doctor",
    next: "cudawatch doctor (who holds GPU memory), then: cudawatch run --stages plain -- PROGRAM",
};
const NCCL_SYSTEM: Advice = Advice {
    causes: &[
        "a system call failed: sockets between ranks, or /dev/shm too small in a container (docker --shm-size)",
        "run with NCCL_DEBUG=INFO for the call that failed",
    ],
    stage: "doctor",
    next: "NCCL_DEBUG=INFO cudawatch run --stages plain -- PROGRAM",
};
const NCCL_USAGE: Advice = Advice {
    causes: &[
        "ranks called different collectives, or in a different order, or with different sizes",
        "a rank failed or exited early (remote error)",
    ],
    stage: "plain",
    next: "NCCL_DEBUG=INFO cudawatch run --stages plain -- PROGRAM",
};

/// Advice by code name (runtime and driver names of one error share it).
const BY_NAME: &[(&[&str], Advice)] = &[
    (
        &[
            "cudaErrorIllegalAddress",
            "CUDA_ERROR_ILLEGAL_ADDRESS",
            "cudaErrorLaunchFailure",
            "CUDA_ERROR_LAUNCH_FAILED",
            "cudaErrorMisalignedAddress",
            "CUDA_ERROR_MISALIGNED_ADDRESS",
            "cudaErrorInvalidAddressSpace",
            "CUDA_ERROR_INVALID_ADDRESS_SPACE",
            "cudaErrorIllegalInstruction",
            "CUDA_ERROR_ILLEGAL_INSTRUCTION",
            "cudaErrorHardwareStackError",
            "CUDA_ERROR_HARDWARE_STACK_ERROR",
            "cudaErrorInvalidPc",
            "CUDA_ERROR_INVALID_PC",
        ],
        MEMORY_FAULT,
    ),
    (&["cudaErrorAssert", "CUDA_ERROR_ASSERT"], ASSERT),
    (
        &["cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT"],
        TIMEOUT,
    ),
    (
        &[
            "cudaErrorLaunchOutOfResources",
            "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        ],
        RESOURCES,
    ),
    (
        &["cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY"],
        OOM,
    ),
    (
        &[
            "cudaErrorInsufficientDriver",
            "cudaErrorCallRequiresNewerDriver",
            "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
            "cudaErrorSystemDriverMismatch",
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            "cudaErrorCompatNotSupportedOnDevice",
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "cudaErrorUnsupportedPtxVersion",
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        ],
        DRIVER,
    ),
    (
        &[
            "cudaErrorNoKernelImageForDevice",
            "CUDA_ERROR_NO_BINARY_FOR_GPU",
            "cudaErrorInvalidKernelImage",
            "CUDA_ERROR_INVALID_IMAGE",
        ],
        NO_IMAGE,
    ),
    (
        &[
            "cudaErrorNoDevice",
            "CUDA_ERROR_NO_DEVICE",
            "cudaErrorInvalidDevice",
            "CUDA_ERROR_INVALID_DEVICE",
        ],
        NO_DEVICE,
    ),
    (
        &[
            "cudaErrorInitializationError",
            "CUDA_ERROR_NOT_INITIALIZED",
            "cudaErrorCudartUnloading",
            "CUDA_ERROR_DEINITIALIZED",
        ],
        INIT,
    ),
    (
        &[
            "cudaErrorInvalidValue",
            "CUDA_ERROR_INVALID_VALUE",
            "cudaErrorInvalidConfiguration",
            "cudaErrorInvalidDeviceFunction",
            "cudaErrorInvalidResourceHandle",
            "CUDA_ERROR_INVALID_HANDLE",
        ],
        BAD_ARGUMENT,
    ),
    (
        &[
            "cudaErrorECCUncorrectable",
            "CUDA_ERROR_ECC_UNCORRECTABLE",
            "cudaErrorNvlinkUncorrectable",
            "CUDA_ERROR_NVLINK_UNCORRECTABLE",
        ],
        HARDWARE,
    ),
    (
        &[
            "CUBLAS_STATUS_EXECUTION_FAILED",
            "CUBLAS_STATUS_INTERNAL_ERROR",
            "CUBLAS_STATUS_MAPPING_ERROR",
            "CUDNN_STATUS_EXECUTION_FAILED",
            "CUDNN_STATUS_INTERNAL_ERROR",
            "CUDNN_STATUS_MAPPING_ERROR",
            "CUFFT_EXEC_FAILED",
            "CUFFT_INTERNAL_ERROR",
            "CUSOLVER_STATUS_EXECUTION_FAILED",
            "CUSOLVER_STATUS_INTERNAL_ERROR",
            "CURAND_STATUS_LAUNCH_FAILURE",
            "CURAND_STATUS_PREEXISTING_FAILURE",
            "ncclUnhandledCudaError",
        ],
        LIBRARY_AFTER_FAULT,
    ),
    (
        &[
            "CUBLAS_STATUS_INVALID_VALUE",
            "CUBLAS_STATUS_NOT_SUPPORTED",
            "CUBLAS_STATUS_ARCH_MISMATCH",
            "CUDNN_STATUS_BAD_PARAM",
            "CUDNN_STATUS_NOT_SUPPORTED",
            "CUFFT_INVALID_VALUE",
            "CUFFT_INVALID_SIZE",
            "CUFFT_INVALID_TYPE",
            "CUSOLVER_STATUS_INVALID_VALUE",
            "CURAND_STATUS_OUT_OF_RANGE",
            "CURAND_STATUS_LENGTH_NOT_MULTIPLE",
            "ncclInvalidArgument",
        ],
        LIBRARY_ARGUMENT,
    ),
    (
        &[
            "CUBLAS_STATUS_ALLOC_FAILED",
            "CUBLAS_STATUS_NOT_INITIALIZED",
            "CUDNN_STATUS_ALLOC_FAILED",
            "CUDNN_STATUS_NOT_INITIALIZED",
            "CUFFT_ALLOC_FAILED",
            "CUSOLVER_STATUS_ALLOC_FAILED",
            "CUSOLVER_STATUS_NOT_INITIALIZED",
            "CURAND_STATUS_ALLOCATION_FAILED",
        ],
        LIBRARY_ALLOC,
    ),
    (&["ncclSystemError"], NCCL_SYSTEM),
    (
        &["ncclInvalidUsage", "ncclRemoteError", "ncclInternalError"],
        NCCL_USAGE,
    ),
];

/// The advice for a code, by name.
pub fn for_code(name: &str) -> Option<Advice> {
    BY_NAME
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, a)| *a)
}

/// What a kind of cudawatch finding means, and what to do.
#[derive(Debug, Clone, Copy)]
pub struct KindAdvice {
    /// The kind's id, as reports give it.
    pub kind: &'static str,
    /// What it means.
    pub meaning: &'static str,
    /// Advice.
    pub advice: Advice,
}

const KINDS: &[KindAdvice] = &[
    KindAdvice {
        kind: "invalid_access",
        meaning: "a kernel read or wrote memory it does not own (memcheck saw the exact access and thread)",
        advice: MEMORY_FAULT,
    },
    KindAdvice {
        kind: "device_exception",
        meaning: "a kernel stopped on a hardware exception (a failed assert, a trap, an imprecise memory fault)",
        advice: ASSERT,
    },
    KindAdvice {
        kind: "stack_overflow",
        meaning: "a thread ran out of its call stack (memcheck's \"Stack overflow\"): the kernel then stops, and the program sees an illegal memory access",
        advice: Advice {
            causes: &[
                "recursion as deep as the data says (a tree walk, a recursive device function)",
                "large local arrays in a deep call chain",
                "a stack size set too small (cudaDeviceSetLimit(cudaLimitStackSize, ...))",
            ],
            stage: "memcheck",
            next: "cudawatch run --stages plain,memcheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "hardware_stack_error",
        meaning: "the GPU's own call-return stack overflowed (\"Hardware Stack Error\", cudaErrorHardwareStackError): the kernel stops",
        advice: Advice {
            causes: &[
                "calls nested too deep in a kernel: deep recursion, or a call chain the compiler could not inline",
                "a corrupted return address (a stack array written past its end)",
            ],
            stage: "memcheck",
            next: "cudawatch run --stages plain,memcheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "illegal_instruction",
        meaning: "a kernel ran an instruction the GPU cannot execute (\"Illegal Instruction\", cudaErrorIllegalInstruction): the kernel stops",
        advice: Advice {
            causes: &[
                "a call through a corrupt or uninitialised function pointer (a virtual call on an object built on the host)",
                "inline assembly or code generated for another GPU",
            ],
            stage: "coredump",
            next: "cudawatch run --stages plain,coredump,memcheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "invalid_pc",
        meaning: "a kernel jumped to an address that holds no code (\"Invalid PC\", \"Out-of-range PC\", cudaErrorInvalidPc): the kernel stops",
        advice: Advice {
            causes: &[
                "a call through a function pointer that holds a host address, an integer or garbage",
                "a virtual call on an object whose vtable was built on the host (objects with virtual functions must be made on the device)",
                "a return address overwritten by a stack array written past its end",
            ],
            stage: "memcheck",
            next: "cudawatch run --stages plain,memcheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "invalid_address_space",
        meaning: "an instruction used an address of a memory space it cannot access (\"Invalid Address Space\", cudaErrorInvalidAddressSpace): the kernel stops",
        advice: Advice {
            causes: &[
                "a wild index or pointer whose address fell outside global memory, in the window of another space (seen for an index array holding garbage: tests/gpu/coredump/graph_wild_index.cu)",
                "an atomic on a local variable or on shared memory through a generic pointer the hardware cannot take",
                "a pointer to one kernel's shared memory kept and used by another, or a generic pointer cast to the wrong space",
            ],
            stage: "memcheck",
            next: "cudawatch run --stages plain,memcheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "trap",
        meaning: "a kernel executed a trap or breakpoint instruction (\"Trace/breakpoint trap\"): the program sees \"unspecified launch failure\"",
        advice: Advice {
            causes: &[
                "__trap() or asm(\"brkpt;\") in a kernel, reached",
                "a trap the compiler put where an operation cannot run: nvcc warned at build time (\"Cannot do atomic on local memory\"), read the build's warnings",
            ],
            stage: "memcheck",
            next: "cudawatch run --stages plain,memcheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "device_heap_error",
        meaning: "malloc or free in a kernel misused (memcheck's \"Malloc/Free Error\"): a double free, a free of a pointer device malloc never returned, a corrupted device heap",
        advice: Advice {
            causes: &[
                "free() called twice on one pointer, by one thread or by two",
                "free() of a pointer that device malloc did not return (an offset into it, a cudaMalloc'd buffer, a stack address)",
                "a write past the end of a device-malloc'd block that corrupted the heap",
            ],
            stage: "memcheck",
            next: "cudawatch run --stages plain,memcheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "global_race",
        meaning: "two threads of one launch touched one word of global memory, at least one writing and not atomically, with nothing ordering them (cudawatch's global-race tool): the result depends on which ran first",
        advice: Advice {
            causes: &[
                "a counter, a histogram bin or a partial sum updated with a plain read and write instead of an atomic",
                "two blocks writing overlapping ranges (tiles that overlap, a grid-stride loop striding less than the grid)",
                "a value read from another block, or another thread of the block, with no __syncthreads(), grid.sync() or atomic flag between the write and the read",
                "a PyTorch op given overlapping tensors (in place, or out=, on a view of its own input) or duplicate indices to write (x[idx] = y): the race is in ATen's kernel, the cause the line that launched it (a race inside cuBLAS's or cuDNN's own kernels is reported, not gating)",
            ],
            stage: "global-race",
            next: "cudawatch run --stages plain,global-race -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "api_error",
        meaning: "a CUDA API call returned an error; after a kernel fault every later call fails the same way (sticky errors), so look for the first",
        advice: LIBRARY_AFTER_FAULT,
    },
    KindAdvice {
        kind: "leak",
        meaning: "device memory allocated and never freed before the program ended",
        advice: Advice {
            causes: &[
                "a cudaMalloc without its cudaFree on some path (an early return, an error path)",
            ],
            stage: "memcheck",
            next: "cudawatch run --stages memcheck --leak-check full -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "uninitialized_read",
        meaning: "a kernel read device memory that nothing wrote (initcheck)",
        advice: Advice {
            causes: &[
                "an output buffer read before it was filled (torch.empty, cudaMalloc without memset)",
                "padding or tail elements a kernel never writes",
                "not a bug: on Hopper, initcheck does not see what cuBLAS's nvjet_sm90 and cuDNN's sm90 kernels write, so reading a bf16/fp16 matmul's or attention's output looks uninitialised (cudawatch marks such reads with a doubt)",
            ],
            stage: "initcheck",
            next: "cudawatch run --stages initcheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "uninitialized_copy",
        meaning: "a CUDA API call (cudaMemcpy's source, a set) read device memory that nothing wrote: initcheck's \"Host API uninitialized memory access\", one record per 32 bytes",
        advice: Advice {
            causes: &[
                "a buffer copied back (tensor.cpu(), .item(), cudaMemcpy) before a kernel filled all of it (torch.empty, cudaMalloc without a memset)",
                "a copy larger than what was written: padding, a tail the kernel skips",
                "not a bug: on Hopper, initcheck does not see what cuBLAS's nvjet_sm90 and cuDNN's sm90 kernels write, so copying their output looks uninitialised (cudawatch marks such copies with a doubt)",
            ],
            stage: "initcheck",
            next: "cudawatch run --stages initcheck --host-stacks all -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "unused_memory",
        meaning: "an allocation that no kernel ever used",
        advice: Advice {
            causes: &["a buffer allocated larger than needed, or never used"],
            stage: "initcheck",
            next: "cudawatch run --stages initcheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "barrier_error",
        meaning: "a barrier misused: __syncthreads() reached by only some threads of a block (synccheck)",
        advice: Advice {
            causes: &[
                "__syncthreads() inside a branch that depends on the thread index",
                "an early return before a barrier",
            ],
            stage: "synccheck",
            next: "cudawatch run --stages synccheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "race",
        meaning: "two threads accessed the same shared memory without a barrier between them, at least one writing (racecheck)",
        advice: Advice {
            causes: &[
                "a missing __syncthreads() between writing shared memory and reading it",
                "a reduction that reuses shared memory without a barrier",
            ],
            stage: "racecheck",
            next: "cudawatch run --stages racecheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "stream_race",
        meaning: "two kernels on different CUDA streams touched the same tensor, at least one writing, with nothing ordering them (PyTorch's CSAN): the result depends on timing; CUDA_LAUNCH_BLOCKING=1 and racecheck both hide it",
        advice: Advice {
            causes: &[
                "work on a side stream (torch.cuda.stream(s)) reads a tensor the default stream is still writing: call s.wait_stream(torch.cuda.current_stream()) first",
                "the default stream uses a side stream's result without torch.cuda.current_stream().wait_stream(s) or an event",
                "a tensor made on one stream and used on another without tensor.record_stream(other), so the allocator reuses its memory too early",
            ],
            stage: "csan",
            next: "TORCH_CUDA_SANITIZER=1 python PROGRAM 2>&1 | cudawatch parse /dev/stdin",
        },
    },
    KindAdvice {
        kind: "collective_timeout",
        meaning: "a rank of a multi-process program waited in a collective (an NCCL all-reduce, broadcast, barrier) until the process group's timeout, because another rank never entered it: the ranks disagree on which collectives they run, or one of them is stuck or gone",
        advice: Advice {
            causes: &[
                "a rank skips a collective the others run (an early return, a `continue` or a condition only its shard meets)",
                "ranks call collectives in different orders, or with different shapes",
                "one rank failed or hangs elsewhere and never reached the collective: its own error is the root cause",
            ],
            stage: "plain",
            next: "cudawatch run --stages plain -- torchrun --nproc_per_node=N PROGRAM",
        },
    },
    KindAdvice {
        kind: "memory_growth",
        meaning: "GPU memory still allocated after each optimizer step rises step over step (cudawatch's memory stage, from PyTorch's allocator history): something keeps every step's tensors alive, and the program will run out of memory given enough steps",
        advice: Advice {
            causes: &[
                "a loss or output kept with its graph across steps (losses.append(loss)): keep loss.item() or loss.detach()",
                "a list or dict of tensors that only grows (metrics, caches, hidden states not detached between steps)",
                "retain_graph=True on every backward, so each step's graph stays alive",
            ],
            stage: "memory",
            next: "cudawatch run --stages memory -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "oom_not_recovered",
        meaning: "cudawatch's oom-recovery stage ran the program with its GPU memory capped below the peak it needed (60% of it by default), and the program ended with an out-of-memory error instead of adapting: on a smaller GPU, or beside another job, it will fail the same way (the checklist's \"Test OOM recovery\"; it gates only with --gate-oom-recovery)",
        advice: Advice {
            causes: &[
                "no recovery path: catch torch.OutOfMemoryError around the step, drop what the failed step held (set tensors to None, optimizer.zero_grad(set_to_none=True), torch.cuda.empty_cache()), halve the batch and retry",
                "a recovery path that keeps the failed step's tensors alive (the exception's traceback holds them): leave the except block before retrying",
            ],
            stage: "oom-recovery",
            next: "cudawatch run --stages plain,memory,oom-recovery --gate-oom-recovery -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "hazard",
        meaning: "one racecheck hazard between two threads: see the race it belongs to",
        advice: Advice {
            causes: &["a missing __syncthreads()"],
            stage: "racecheck",
            next: "cudawatch run --stages racecheck -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "cuda_error",
        meaning: "the program itself reported a CUDA error; cudawatch explain names the code",
        advice: MEMORY_FAULT,
    },
    KindAdvice {
        kind: "device_assert",
        meaning: "a device-side assert failed, as the program printed it",
        advice: ASSERT,
    },
    KindAdvice {
        kind: "out_of_memory",
        meaning: "the framework ran out of GPU memory",
        advice: OOM,
    },
    KindAdvice {
        kind: "library_error",
        meaning: "a CUDA library (cuBLAS, cuDNN, cuFFT, cuSOLVER, cuRAND, NCCL) returned an error status",
        advice: LIBRARY_AFTER_FAULT,
    },
    KindAdvice {
        kind: "no_kernel_image",
        meaning: "the program was not built for this GPU",
        advice: NO_IMAGE,
    },
    KindAdvice {
        kind: "driver_version",
        meaning: "the CUDA driver is older than the runtime or toolkit needs",
        advice: DRIVER,
    },
    KindAdvice {
        kind: "python_exception",
        meaning: "the program raised a Python exception",
        advice: Advice {
            causes: &[
                "see its traceback; a CUDA error in it is explained by cudawatch explain with the traceback pasted",
            ],
            stage: "plain",
            next: "cudawatch run --stages plain -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "uncoalesced_access",
        meaning: "a kernel's global loads or stores move more 32-byte sectors than the bytes they use need (Nsight Compute)",
        advice: Advice {
            causes: &[
                "neighbouring threads access addresses far apart (a stride, a column of a row-major matrix)",
                "an array of structures read one field at a time",
            ],
            stage: "ncu",
            next: "cudawatch run --stages ncu -- PROGRAM",
        },
    },
    KindAdvice {
        kind: "unrecognised",
        meaning: "a tool record cudawatch does not know yet, kept as it was",
        advice: Advice {
            causes: &["see the record's text in the report"],
            stage: "memcheck",
            next: "cudawatch run -- PROGRAM",
        },
    },
];

/// The advice for a finding kind, by its id.
pub fn for_kind(kind: &str) -> Option<&'static KindAdvice> {
    KINDS.iter().find(|k| k.kind == kind)
}

/// Every finding kind with advice.
pub fn kinds() -> &'static [KindAdvice] {
    KINDS
}
