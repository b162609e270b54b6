// Shared error check for the planted-bug programs: prints what real CUDA code
// prints (error name, code, message, call site) so the stderr parser sees the
// common idiom, and exits 1 like most hand-written checks do.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "CUDA error %s (%d) at %s:%d: %s\n",                \
                   cudaGetErrorName(err_), static_cast<int>(err_), __FILE__,   \
                   __LINE__, cudaGetErrorString(err_));                        \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
