#!/usr/bin/env python3
"""The strings the libraries themselves print for each error code
(cudaGetErrorString, cuGetErrorString, cublasGetStatusString,
cudnnGetErrorString, ncclGetErrorString, ...), called through ctypes for
every value of the enum snapshot (sample-reports/error-tables/). These are
what users paste ("an illegal memory access was encountered"), so
`cudawatch explain` matches pasted messages against them.
Run on the GPU machine:
  python3 scripts/capture-error-strings.py sample-reports/error-tables/error-enums.txt > error-strings.tsv
Output: TYPE <tab> VALUE <tab> NAME <tab> STRING, one line per code.
"""
import ctypes
import ctypes.util
import glob
import os
import re
import sys


def load(names):
    dirs = ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu"]
    try:
        import nvidia  # pip wheels: nvidia/<lib>/lib
        dirs += [os.path.join(p, "*", "lib") for p in nvidia.__path__]
    except Exception:
        pass
    for n in names:
        for d in dirs:
            for p in sorted(glob.glob(os.path.join(d, n))):
                try:
                    return ctypes.CDLL(p)
                except OSError:
                    continue
        found = ctypes.util.find_library(n.split(".so")[0].removeprefix("lib"))
        if found:
            try:
                return ctypes.CDLL(found)
            except OSError:
                pass
    return None


def direct(lib, fn):
    """A function `const char *fn(int)`."""
    if lib is None:
        return None
    f = getattr(lib, fn, None)
    if f is None:
        return None
    f.restype = ctypes.c_char_p
    f.argtypes = [ctypes.c_int]
    return lambda v: (f(v) or b"").decode(errors="replace")


def by_pointer(lib, fn):
    """A function `CUresult fn(int, const char **)`."""
    if lib is None:
        return None
    f = getattr(lib, fn, None)
    if f is None:
        return None
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]

    def call(v):
        s = ctypes.c_char_p()
        rc = f(v, ctypes.byref(s))
        return (s.value or b"").decode(errors="replace") if rc == 0 else ""

    return call


FUNCS = {
    "cudaError": lambda: direct(load(["libcudart.so*"]), "cudaGetErrorString"),
    "CUresult": lambda: by_pointer(load(["libcuda.so.1", "libcuda.so"]), "cuGetErrorString"),
    "cublasStatus_t": lambda: direct(load(["libcublas.so*"]), "cublasGetStatusString"),
    "cudnnStatus_t": lambda: direct(load(["libcudnn.so*", "libcudnn_graph.so*"]), "cudnnGetErrorString"),
    "ncclResult_t": lambda: direct(load(["libnccl.so*"]), "ncclGetErrorString"),
    "cusolverStatus_t": lambda: None,
    "cufftResult": lambda: None,
    "curandStatus": lambda: None,
}

text = open(sys.argv[1]).read()
for section in text.split("=== ")[1:]:
    type_name = section.split()[0]
    fn = FUNCS.get(type_name, lambda: None)()
    if fn is None:
        print(f"# {type_name}: no string function found or the library has none", file=sys.stderr)
        continue
    for name, value in re.findall(r"^\s*(?:typedef enum \{)?\s*(\w+)\s*=\s*(0x[0-9A-Fa-f]+|\d+)", section, re.M):
        v = int(value, 0)
        try:
            s = fn(v)
        except Exception as e:  # a library that cannot answer for a value
            s = ""
        s = s.replace("\t", " ").replace("\n", " ").strip()
        print(f"{type_name}\t{v}\t{name}\t{s}")
