// The device side of the global-race tool: patched by the Sanitizer API in
// front of every global memory access and every barrier of the program's
// kernels (docs/global-race.md). Built with
//   nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch
// by build.sh. Nothing here allocates; the state is the host's (shadow.h).
#ifdef GLOBAL_RACE_SIMULATION
#include "simulation.h"  // the same code on the host, one thread at a time
#else
#include <sanitizer_patching.h>
#endif

#include "shadow.h"

using namespace global_race;

namespace {

constexpr unsigned long long kValid = 1ull;
constexpr unsigned long long kAtomic = 2ull;

__device__ unsigned linear_tid() {
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return block * (blockDim.x * blockDim.y * blockDim.z) + thread;
}

__device__ unsigned long long pack(unsigned tid, unsigned epoch, unsigned mask, bool atomic) {
  return (static_cast<unsigned long long>(tid) << 32) |
         (static_cast<unsigned long long>(epoch & 0x3ffffff) << 6) |
         (static_cast<unsigned long long>(mask & 0xf) << 2) | (atomic ? kAtomic : 0) | kValid;
}

__device__ unsigned tid_of(unsigned long long a) { return static_cast<unsigned>(a >> 32); }
__device__ unsigned epoch_of(unsigned long long a) { return static_cast<unsigned>(a >> 6) & 0x3ffffff; }
__device__ unsigned mask_of(unsigned long long a) { return static_cast<unsigned>(a >> 2) & 0xf; }

__device__ unsigned block_of(const State *s, unsigned tid) { return tid / s->threads_per_block; }

// The block's own clock now: accesses before its next release carry it.
__device__ unsigned stamp_of(const State *s, unsigned block) {
  return s->blocks == 0 ? 0 : s->clocks[block * s->blocks + block] + 1;
}

// Two accesses of one thread, or of one block separated by a barrier both
// passed, are ordered; of two blocks, when the later one's block has
// acquired (through an atomic) what the earlier one's released after it.
__device__ bool ordered(const State *s, unsigned long long a, unsigned a_stamp, unsigned long long b) {
  if (tid_of(a) == tid_of(b)) return true;
  unsigned block_a = block_of(s, tid_of(a)), block_b = block_of(s, tid_of(b));
  if (block_a == block_b) return epoch_of(a) != epoch_of(b);
  return s->blocks != 0 && a_stamp != 0 && s->clocks[block_b * s->blocks + block_a] >= a_stamp;
}

__device__ unsigned long long mix(unsigned long long x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

// The word's entry, made on first sight; null when the table is full.
__device__ Word *word_of(State *s, unsigned long long key) {
  unsigned mask = s->words_capacity - 1;
  unsigned at = static_cast<unsigned>(mix(key)) & mask;
  for (unsigned probe = 0; probe < 64; ++probe) {
    Word *w = &s->words[(at + probe) & mask];
    unsigned long long seen = atomicCAS(&w->key, 0ull, key);
    if (seen == 0ull) {
      atomicAdd(&s->words_used, 1ull);
      return w;
    }
    if (seen == key) return w;
  }
  atomicAdd(&s->words_dropped, 1ull);
  return nullptr;
}

// The sync table's row of a word an atomic touched; null when full.
__device__ unsigned *sync_of(State *s, unsigned long long key, bool make) {
  unsigned mask = s->sync_capacity - 1;
  unsigned at = static_cast<unsigned>(mix(key ^ 0x5bd1e995ull)) & mask;
  for (unsigned probe = 0; probe < 32; ++probe) {
    unsigned slot = (at + probe) & mask;
    unsigned long long seen = make ? atomicCAS(&s->sync_keys[slot], 0ull, key) : s->sync_keys[slot];
    if (seen == key || (make && seen == 0ull)) return &s->sync_clocks[slot * s->blocks];
    if (seen == 0ull) return nullptr;
  }
  if (make) atomicAdd(&s->sync_dropped, 1ull);
  return nullptr;
}

// Release: the word's clock takes the block's; the block's own clock moves
// on. Acquire: the block's clock takes the word's.
__device__ void release(State *s, unsigned block, unsigned *sync) {
  unsigned *mine = &s->clocks[block * s->blocks];
  for (unsigned k = 0; k < s->blocks; ++k) {
    unsigned value = k == block ? mine[k] + 1 : mine[k];
    if (value != 0) atomicMax(&sync[k], value);
  }
  atomicAdd(&mine[block], 1u);
}

__device__ void acquire(State *s, unsigned block, const unsigned *sync) {
  unsigned *mine = &s->clocks[block * s->blocks];
  for (unsigned k = 0; k < s->blocks; ++k) {
    if (k != block && sync[k] != 0) atomicMax(&mine[k], sync[k]);
  }
}

__device__ void race(State *s, unsigned long long first, unsigned long long first_pc,
                     unsigned long long second, unsigned long long pc, unsigned long long key,
                     unsigned kind) {
  unsigned mask = s->pairs_capacity - 1;
  unsigned long long id = mix(first_pc * 31 + pc) ^ kind;
  unsigned at = static_cast<unsigned>(id) & mask;
  for (unsigned probe = 0; probe < 32; ++probe) {
    Pair *p = &s->pairs[(at + probe) & mask];
    unsigned long long seen = atomicCAS(&p->pc_second, 0ull, pc);
    if (seen == 0ull) {
      // Ours: the first example. A reader that finds count 0 skips it.
      p->pc_first = first_pc;
      p->address = key;
      p->tid_first = tid_of(first);
      p->tid_second = tid_of(second);
      p->kind = kind;
      __threadfence();
      atomicAdd(&p->count, 1u);
      return;
    }
    if (seen == pc && p->pc_first == first_pc && p->kind == kind) {
      atomicAdd(&p->count, 1u);
      return;
    }
  }
  atomicAdd(&s->pairs_dropped, 1ull);
}

// The patch runs before its instruction, so an atomic's acquire misses
// the releases of atomics that reach the word between the patch and the
// instruction: the block that counts last in a last-block reduction
// (CUDA's threadFenceReduction sample, ATen's reductions) then reads
// partials it cannot see released (a false race, seen on an H200). The
// thread that made the atomic acquires its row again at its next access
// or barrier, by when its atomic has run, and every atomic before it in
// the word's real order had been released.
__device__ void remember_atomic(State *s, unsigned block, unsigned tid, const unsigned *sync) {
  unsigned long long row = static_cast<unsigned long long>((sync - s->sync_clocks) / s->blocks);
  s->pending[block] = (static_cast<unsigned long long>(tid) << 32) | (row + 1);
}

__device__ void deferred(State *s, unsigned block, unsigned tid) {
  if (s->blocks == 0) return;
  unsigned long long p = *(volatile unsigned long long *)&s->pending[block];
  if (p == 0 || static_cast<unsigned>(p >> 32) != tid) return;
  unsigned row = static_cast<unsigned>(p & 0xffffffffull) - 1;
  acquire(s, block, &s->sync_clocks[row * s->blocks]);
  atomicCAS(&s->pending[block], p, 0ull);
}

// Whether an access of `a` overlaps bytes of the word `bytes` touches.
__device__ bool overlaps(unsigned long long a, unsigned bytes) {
  return (a & kValid) && (mask_of(a) & bytes);
}

// One access to one word: it is published first (an exchange, then a
// fence), and only then are the other accesses read. Two threads that
// meet a word at once then see each other, at least one of them: checking
// first and publishing after let a write and a read done in lockstep by
// two blocks miss each other (every cross-block race of the corpus, seen
// on an H200).
__device__ void check_word(State *s, unsigned long long key, unsigned bytes, unsigned long long pc,
                           bool write, bool atomic, unsigned tid) {
  Word *w = word_of(s, key);
  if (w == nullptr) return;
  unsigned block = block_of(s, tid);
  deferred(s, block, tid);
  unsigned long long seen_write = *(volatile unsigned long long *)&w->write;
  bool syncs = s->blocks != 0 && (atomic || ((seen_write & kAtomic) && !write));
  unsigned *sync = syncs ? sync_of(s, key, atomic) : nullptr;
  if (sync != nullptr) acquire(s, block, sync);
  unsigned stamp = stamp_of(s, block);
  if (sync != nullptr && atomic) {
    release(s, block, sync);
    remember_atomic(s, block, tid, sync);
  }
  unsigned epoch = tid < s->threads ? s->epochs[tid] : 0;
  unsigned long long me = pack(tid, epoch, bytes, atomic);
  if (write) {
    unsigned long long prev_pc = *(volatile unsigned long long *)&w->write_pc;
    unsigned prev_stamp = *(volatile unsigned *)&w->write_stamp;
    unsigned long long prev = atomicExch(&w->write, me);
    w->write_pc = pc;
    w->write_stamp = stamp;
    __threadfence();
    unsigned long long reader = *(volatile unsigned long long *)&w->read;
    unsigned long long reader_pc = *(volatile unsigned long long *)&w->read_pc;
    unsigned reader_stamp = *(volatile unsigned *)&w->read_stamp;
    if (overlaps(prev, bytes) && !(atomic && (prev & kAtomic)) && !ordered(s, prev, prev_stamp, me))
      race(s, prev, prev_pc, me, pc, key, kWrite);
    if (!atomic && overlaps(reader, bytes) && !ordered(s, reader, reader_stamp, me))
      race(s, reader, reader_pc, me, pc, key, kReadWrite);
  } else {
    atomicExch(&w->read, me);
    w->read_pc = pc;
    w->read_stamp = stamp;
    __threadfence();
    unsigned long long writer = *(volatile unsigned long long *)&w->write;
    unsigned long long writer_pc = *(volatile unsigned long long *)&w->write_pc;
    unsigned writer_stamp = *(volatile unsigned *)&w->write_stamp;
    if (overlaps(writer, bytes) && !(writer & kAtomic) && !ordered(s, writer, writer_stamp, me))
      race(s, writer, writer_pc, me, pc, key, kWriteRead);
  }
}

}  // namespace

extern "C" __device__ __noinline__ SanitizerPatchResult GlobalRaceAccess(
    void *userdata, uint64_t pc, void *ptr, uint32_t size, uint32_t flags, const void *) {
  State *s = static_cast<State *>(userdata);
  if (s == nullptr || !s->enabled) return SANITIZER_PATCH_SUCCESS;
  if (flags & SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH) return SANITIZER_PATCH_SUCCESS;
  atomicOr(&s->flags_seen, flags);
  // A strong access (an atomic, a volatile or acquire/release access) is
  // flagged with its scope; ATOMSYS marks system-scope atomics alone (an
  // atomicAdd carried no ATOMSYS on an H200). Strong accesses do not race
  // with each other; block-scoped ones are weighed as GPU-scoped (a race
  // through a block-scoped atomic across blocks is missed, said in
  // docs/global-race.md).
  constexpr uint32_t kStrong = SANITIZER_MEMORY_DEVICE_FLAG_ATOMSYS | SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_CTA |
                               SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_SM | SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_GPU |
                               SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_SYS |
                               SANITIZER_MEMORY_DEVICE_FLAG_ATOMIC_WRITE_ONLY;
  bool atomic = flags & kStrong;
  bool write = flags & (SANITIZER_MEMORY_DEVICE_FLAG_WRITE | SANITIZER_MEMORY_DEVICE_FLAG_ATOMIC_WRITE_ONLY);
  if (flags & (SANITIZER_MEMORY_DEVICE_FLAG_ATOMSYS | SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_GPU |
               SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_SYS))
    s->saw_atomic = 1;
  unsigned long long address = reinterpret_cast<unsigned long long>(ptr);
  unsigned tid = linear_tid();
  // Each 4-byte word the access covers, with the bytes of it it touches.
  unsigned long long end = address + size;
  for (unsigned long long word = address & ~3ull; word < end; word += 4) {
    unsigned long long lo = word > address ? word : address;
    unsigned long long hi = word + 4 < end ? word + 4 : end;
    unsigned bytes = ((1u << (hi - lo)) - 1u) << (lo - word);
    check_word(s, word, bytes, pc, write, atomic, tid);
  }
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult GlobalRaceBarrier(
    void *userdata, uint64_t, uint32_t, uint32_t thread_count, uint32_t) {
  State *s = static_cast<State *>(userdata);
  if (s == nullptr || !s->enabled) return SANITIZER_PATCH_SUCCESS;
  // Only a barrier of the whole block orders the block's threads; one of
  // some of its warps (a named barrier's count) is not weighed.
  if (thread_count != 0 && thread_count != s->threads_per_block) return SANITIZER_PATCH_SUCCESS;
  unsigned tid = linear_tid();
  deferred(s, block_of(s, tid), tid);
  if (tid < s->threads) s->epochs[tid] += 1;
  return SANITIZER_PATCH_SUCCESS;
}
