#!/usr/bin/env python3
"""Copies the error enums of the CUDA toolkit's and libraries' headers,
verbatim, into one snapshot file: the source of `cudawatch explain`'s
tables (sample-reports/error-tables/, checked by a test). Run on the GPU
machine: python3 scripts/capture-error-tables.py > error-enums.txt
"""
import glob
import os
import re
import sys

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")


def site_include(package):
    """The include directory of a pip-installed NVIDIA library (nvidia.cudnn, ...)."""
    try:
        mod = __import__(package, fromlist=["_"])
    except Exception:
        return []
    roots = list(getattr(mod, "__path__", []))
    return [os.path.join(r, "include") for r in roots]


# (enum type name, header file names, directories to look in)
WANTED = [
    ("cudaError", ["driver_types.h"], [f"{CUDA}/include", f"{CUDA}/targets/x86_64-linux/include"]),
    ("CUresult", ["cuda.h"], [f"{CUDA}/include", f"{CUDA}/targets/x86_64-linux/include"]),
    ("cublasStatus_t", ["cublas_api.h"], [f"{CUDA}/include"] + site_include("nvidia.cublas")),
    ("cufftResult", ["cufft.h", "cufftXt.h"], [f"{CUDA}/include"] + site_include("nvidia.cufft")),
    ("cusolverStatus_t", ["cusolver_common.h"], [f"{CUDA}/include"] + site_include("nvidia.cusolver")),
    ("curandStatus", ["curand.h"], [f"{CUDA}/include"] + site_include("nvidia.curand")),
    ("cudnnStatus_t", ["cudnn_graph.h", "cudnn_ops_infer.h", "cudnn.h"], site_include("nvidia.cudnn") + [f"{CUDA}/include", "/usr/include"]),
    ("ncclResult_t", ["nccl.h"], site_include("nvidia.nccl") + [f"{CUDA}/include", "/usr/include"]),
]


def find(names, dirs):
    for d in dirs:
        for n in names:
            for p in glob.glob(os.path.join(d, "**", n), recursive=True):
                return p
    return None


def enum_block(text, name):
    """The enum that defines `name`: `enum name {...}`, `typedef enum x {...} name;`."""
    patterns = [
        rf"enum\s+(?:__device_builtin__\s+)?{re.escape(name)}\s*\{{.*?\}}\s*;",
        rf"typedef\s+enum\s*(?:\w+\s*)?\{{(?:(?!typedef).)*?\}}\s*{re.escape(name)}\s*;",
        rf"typedef\s+enum\s+{re.escape(name)}\s*\{{.*?\}}\s*\w+\s*;",
    ]
    for p in patterns:
        m = re.search(p, text, re.S)
        if m:
            return m.group(0)
    return None


def version_line(text):
    for key in ("CUDA_VERSION", "CUBLAS_VER_MAJOR", "CUDNN_MAJOR", "NCCL_VERSION_CODE", "CUFFT_VERSION", "CURAND_VERSION", "CUSOLVER_VER_MAJOR"):
        m = re.search(rf"#define\s+{key}\s+(\S+)", text)
        if m:
            return f"{key} {m.group(1)}"
    return "version unknown"


for name, files, dirs in WANTED:
    path = find(files, dirs)
    if not path:
        print(f"=== {name}: NOT FOUND in {', '.join(dirs)}")
        continue
    text = open(path, encoding="utf-8", errors="replace").read()
    block = enum_block(text, name)
    if block is None:
        print(f"=== {name}: no enum in {path}")
        continue
    version = version_line(text)
    if name == "cudnnStatus_t" and "CUDNN_MAJOR" not in version:
        v = find(["cudnn_version.h"], dirs)
        if v:
            t = open(v).read()
            parts = []
            for k in ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"):
                m = re.search(r"#define " + k + r" (\d+)", t)
                if m:
                    parts.append(f"{k} {m.group(1)}")
            version = " ".join(parts)
    print(f"=== {name} from {path} ({version})")
    print(block)
    print()
sys.stdout.flush()
