// What patches.cu needs of CUDA and the Sanitizer API, on the host, for
// simulate.cpp: threads are run one access at a time in the order a test
// gives, so the detector's rules are tested without a GPU. The flag values
// are the Sanitizer API's (sanitizer_patching.h, 2026.4).
#pragma once
#include <cstdint>

#define __device__
#define __noinline__

enum SanitizerPatchResult { SANITIZER_PATCH_SUCCESS = 0 };

enum {
  SANITIZER_MEMORY_DEVICE_FLAG_READ = 1 << 0,
  SANITIZER_MEMORY_DEVICE_FLAG_WRITE = 1 << 1,
  SANITIZER_MEMORY_DEVICE_FLAG_ATOMSYS = 1 << 2,
  SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH = 1 << 3,
  SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_CTA = 1 << 4,
  SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_SM = 1 << 5,
  SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_GPU = 1 << 6,
  SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_SYS = 1 << 7,
  SANITIZER_MEMORY_DEVICE_FLAG_ATOMIC_WRITE_ONLY = 1 << 8,
};

struct sim_dim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline sim_dim3 threadIdx, blockIdx, blockDim, gridDim;

inline unsigned long long atomicCAS(unsigned long long *at, unsigned long long expected,
                                    unsigned long long value) {
  unsigned long long old = *at;
  if (old == expected) *at = value;
  return old;
}
inline unsigned long long atomicAdd(unsigned long long *at, unsigned long long v) {
  unsigned long long old = *at;
  *at += v;
  return old;
}
inline unsigned atomicAdd(unsigned *at, unsigned v) {
  unsigned old = *at;
  *at += v;
  return old;
}
inline unsigned long long atomicExch(unsigned long long *at, unsigned long long v) {
  unsigned long long old = *at;
  *at = v;
  return old;
}
inline unsigned atomicMax(unsigned *at, unsigned v) {
  unsigned old = *at;
  if (v > old) *at = v;
  return old;
}
inline unsigned atomicOr(unsigned *at, unsigned v) {
  unsigned old = *at;
  *at |= v;
  return old;
}
inline void __threadfence() {}
