// The detector's rules (patches.cu) run on the host, one access at a time:
// each planted pattern of tests/gpu/global_race/ as a sequence of
// accesses, and whether it is a race. Built and run by
// tests/integration/native_global_race.rs with the host's C++ compiler:
//   c++ -std=c++17 -DGLOBAL_RACE_SIMULATION simulate.cpp -o simulate
// Prints one line per case and exits 1 if any case is judged wrongly.
#include <cstdio>
#include <vector>

#include "patches.cu"

namespace {

constexpr uint32_t kLoad = SANITIZER_MEMORY_DEVICE_FLAG_READ;
constexpr uint32_t kStore = SANITIZER_MEMORY_DEVICE_FLAG_WRITE;
// What an atomicAdd is taken to carry: its scope (an H200 gave no ATOMSYS).
constexpr uint32_t kAtomicAdd = SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_GPU | SANITIZER_MEMORY_DEVICE_FLAG_READ |
                             SANITIZER_MEMORY_DEVICE_FLAG_WRITE;

// One launch's state on the host, as the tool's host side lays it out.
struct Launch {
  std::vector<unsigned> epochs;
  std::vector<Word> words;
  std::vector<Pair> pairs;
  std::vector<unsigned> clocks;
  std::vector<unsigned long long> sync_keys;
  std::vector<unsigned> sync_clocks;
  std::vector<unsigned long long> pending;
  State state{};

  Launch(unsigned blocks, unsigned threads)
      : epochs(blocks * threads),
        words(1u << 12),
        pairs(1u << 8),
        clocks(blocks * blocks),
        sync_keys(64),
        sync_clocks(64 * blocks),
        pending(blocks) {
    state.enabled = 1;
    state.threads_per_block = threads;
    state.threads = blocks * threads;
    state.words_capacity = static_cast<unsigned>(words.size());
    state.pairs_capacity = static_cast<unsigned>(pairs.size());
    state.epochs = epochs.data();
    state.words = words.data();
    state.pairs = pairs.data();
    state.blocks = blocks;
    state.sync_capacity = static_cast<unsigned>(sync_keys.size());
    state.clocks = clocks.data();
    state.sync_keys = sync_keys.data();
    state.sync_clocks = sync_clocks.data();
    state.pending = pending.data();
    gridDim.x = blocks;
    blockDim.x = threads;
    gridDim.y = gridDim.z = blockDim.y = blockDim.z = 1;
  }

  void as(unsigned block, unsigned thread) {
    blockIdx.x = block;
    threadIdx.x = thread;
  }

  void access(unsigned block, unsigned thread, uint64_t pc, uint64_t address, uint32_t size, uint32_t flags) {
    as(block, thread);
    GlobalRaceAccess(&state, pc, reinterpret_cast<void *>(address), size, flags, nullptr);
  }

  void barrier(unsigned block, unsigned thread) {
    as(block, thread);
    GlobalRaceBarrier(&state, 0, 0, 0, 0);
  }

  unsigned races() const {
    unsigned n = 0;
    for (const Pair &p : pairs) n += p.count > 0;
    return n;
  }
};

constexpr uint64_t kBase = 0x7f0000000000ull;
int failures = 0;

void expect(const char *name, const Launch &l, bool race) {
  bool found = l.races() > 0;
  std::printf("%s %s: %u pair%s of lines\n", found == race ? "ok  " : "FAIL", name, l.races(),
              l.races() == 1 ? "" : "s");
  failures += found != race;
}

void counters() {
  // counter_block.cu: every thread reads the counter, then writes it.
  Launch racy(1, 256);
  for (unsigned t = 0; t < 256; ++t) {
    racy.access(0, t, 0x100, kBase, 4, kLoad);
    racy.access(0, t, 0x110, kBase, 4, kStore);
  }
  expect("counter_block: a counter without an atomic", racy, true);
  // counter_block_atomic.cu.
  Launch atomic(1, 256);
  for (unsigned t = 0; t < 256; ++t) atomic.access(0, t, 0x100, kBase, 4, kAtomicAdd);
  expect("counter_block_atomic: atomicAdd", atomic, false);
  // counter_grid.cu: one thread of each of 64 blocks.
  Launch grid(64, 128);
  for (unsigned b = 0; b < 64; ++b) {
    grid.access(b, 0, 0x100, kBase, 4, kLoad);
    grid.access(b, 0, 0x110, kBase, 4, kStore);
  }
  expect("counter_grid: across blocks", grid, true);
}

void neighbours() {
  // neighbour_no_barrier.cu: write your slot, read the next one.
  Launch racy(1, 32);
  for (unsigned t = 0; t < 32; ++t) racy.access(0, t, 0x200, kBase + 4 * t, 4, kStore);
  for (unsigned t = 0; t < 32; ++t) racy.access(0, t, 0x210, kBase + 4 * ((t + 1) % 32), 4, kLoad);
  expect("neighbour_no_barrier: no __syncthreads()", racy, true);
  // neighbour_barrier.cu: the same with every thread through a barrier.
  Launch ordered(1, 32);
  for (unsigned t = 0; t < 32; ++t) ordered.access(0, t, 0x200, kBase + 4 * t, 4, kStore);
  for (unsigned t = 0; t < 32; ++t) ordered.barrier(0, t);
  for (unsigned t = 0; t < 32; ++t) ordered.access(0, t, 0x210, kBase + 4 * ((t + 1) % 32), 4, kLoad);
  expect("neighbour_barrier: __syncthreads()", ordered, false);
}

void tiles() {
  // waw_blocks.cu: tiles of 128 at a step of 120 overlap by 8 words.
  Launch racy(2, 128);
  for (unsigned b = 0; b < 2; ++b)
    for (unsigned t = 0; t < 128; ++t) racy.access(b, t, 0x300, kBase + 4 * (b * 120 + t), 4, kStore);
  expect("waw_blocks: two blocks write one address", racy, true);
  Launch fixed(2, 128);
  for (unsigned b = 0; b < 2; ++b)
    for (unsigned t = 0; t < 128; ++t) fixed.access(b, t, 0x300, kBase + 4 * (b * 128 + t), 4, kStore);
  expect("waw_blocks_fixed: disjoint tiles", fixed, false);
  // Bytes: neighbouring threads write neighbouring bytes of one word.
  Launch bytes(1, 64);
  for (unsigned t = 0; t < 64; ++t) bytes.access(0, t, 0x310, kBase + t, 1, kStore);
  expect("bytes: one byte each, four to a word", bytes, false);
  // A 16-byte store per thread over 16-byte slots: four words each.
  Launch vectors(1, 64);
  for (unsigned t = 0; t < 64; ++t) vectors.access(0, t, 0x320, kBase + 16 * t, 16, kStore);
  expect("vectors: 16 bytes each", vectors, false);
}

void others() {
  // read_other_block.cu: block 0 writes, block 1 reads, nothing between.
  Launch racy(2, 32);
  for (unsigned t = 0; t < 32; ++t) racy.access(0, t, 0x400, kBase + 4 * t, 4, kStore);
  for (unsigned t = 0; t < 32; ++t) racy.access(1, t, 0x410, kBase + 4 * t, 4, kLoad);
  expect("read_other_block: another block's write", racy, true);
  // A thread reads what it wrote itself.
  Launch own(1, 32);
  for (unsigned t = 0; t < 32; ++t) {
    own.access(0, t, 0x500, kBase + 4 * t, 4, kStore);
    own.access(0, t, 0x510, kBase + 4 * t, 4, kLoad);
  }
  expect("own slot: write then read", own, false);
  // Many readers of one word nobody writes.
  Launch readers(4, 32);
  for (unsigned b = 0; b < 4; ++b)
    for (unsigned t = 0; t < 32; ++t) readers.access(b, t, 0x600, kBase, 4, kLoad);
  expect("readers: a shared input", readers, false);
}

void across_blocks() {
  // fence_flag.cu: block 0 writes, barrier, its thread 0 sets the flag with
  // an atomic; block 1's thread 0 reads it with an atomic, barrier, and
  // block 1 reads what block 0 wrote.
  const uint64_t flag = kBase + 0x10000;
  Launch flagged(2, 32);
  for (unsigned t = 0; t < 32; ++t) flagged.access(0, t, 0x700, kBase + 4 * t, 4, kStore);
  for (unsigned t = 0; t < 32; ++t) flagged.barrier(0, t);
  flagged.access(1, 0, 0x720, flag, 4, kAtomicAdd);  // block 1 polls first: 0
  flagged.access(0, 0, 0x710, flag, 4, kAtomicAdd);  // block 0 publishes
  flagged.access(1, 0, 0x720, flag, 4, kAtomicAdd);  // block 1 sees it
  for (unsigned t = 0; t < 32; ++t) flagged.barrier(1, t);
  for (unsigned t = 0; t < 32; ++t) flagged.access(1, t, 0x730, kBase + 4 * t, 4, kLoad);
  expect("fence_flag: a flag set and read with atomics", flagged, false);
  // grid_sync.cu, block 1 arriving first: each block's thread 0 adds to
  // the counter, block 1 spins on plain loads of it, then reads.
  const uint64_t arrived = kBase + 0x20000;
  Launch grid(2, 32);
  for (unsigned t = 0; t < 32; ++t) grid.barrier(1, t);
  grid.access(1, 0, 0x800, arrived, 4, kAtomicAdd);
  for (unsigned t = 0; t < 32; ++t) grid.access(0, t, 0x810, kBase + 4 * t, 4, kStore);
  for (unsigned t = 0; t < 32; ++t) grid.barrier(0, t);
  grid.access(0, 0, 0x800, arrived, 4, kAtomicAdd);
  grid.access(1, 0, 0x820, arrived, 4, kLoad);  // the spin sees both arrived
  for (unsigned t = 0; t < 32; ++t) grid.barrier(1, t);
  for (unsigned t = 0; t < 32; ++t) grid.access(1, t, 0x830, kBase + 4 * t, 4, kLoad);
  expect("grid_sync: block 1 first, then block 0", grid, false);
  // The flag read before it was set orders nothing: still a race.
  Launch early(2, 32);
  early.access(1, 0, 0x720, flag, 4, kAtomicAdd);  // block 1 polls: 0, goes on
  for (unsigned t = 0; t < 32; ++t) early.access(1, t, 0x730, kBase + 4 * t, 4, kLoad);
  for (unsigned t = 0; t < 32; ++t) early.access(0, t, 0x700, kBase + 4 * t, 4, kStore);
  early.access(0, 0, 0x710, flag, 4, kAtomicAdd);
  expect("flag read before the write it guards", early, true);
  // An atomic elsewhere does not order what it was not released after.
  Launch unrelated(2, 32);
  unrelated.access(0, 0, 0x900, flag, 4, kAtomicAdd);
  for (unsigned t = 0; t < 32; ++t) unrelated.access(0, t, 0x910, kBase + 4 * t, 4, kStore);
  unrelated.access(1, 0, 0x920, flag, 4, kAtomicAdd);
  for (unsigned t = 0; t < 32; ++t) unrelated.access(1, t, 0x930, kBase + 4 * t, 4, kLoad);
  expect("writes after the release: a race", unrelated, true);
  // last_block_reduction.cu, 4 blocks: each block's thread 0 writes its
  // partial and counts itself done with an atomic. Block 3's atomic is
  // patched before block 2's, but the hardware runs block 2's first, so
  // block 3 counts last; after its barrier it reads every partial.
  const uint64_t done = kBase + 0x30000, partial = kBase + 0x40000;
  Launch last(4, 2);
  for (unsigned b = 0; b < 2; ++b) {
    last.access(b, 0, 0xa00, partial + 4 * b, 4, kStore);
    last.access(b, 0, 0xa10, done, 4, kAtomicAdd);
  }
  last.access(3, 0, 0xa00, partial + 12, 4, kStore);
  last.access(3, 0, 0xa10, done, 4, kAtomicAdd);  // patched first...
  last.access(2, 0, 0xa00, partial + 8, 4, kStore);
  last.access(2, 0, 0xa10, done, 4, kAtomicAdd);  // ...run first
  for (unsigned t = 0; t < 2; ++t) last.barrier(3, t);
  for (unsigned b = 0; b < 4; ++b) last.access(3, b % 2, 0xa20, partial + 4 * b, 4, kLoad);
  expect("last_block_reduction: the last block's atomic patched before another's", last, false);
  // The same reads before the barrier, by a thread that made no atomic:
  // nothing orders block 2's partial before them.
  Launch unordered(4, 2);
  for (unsigned b = 0; b < 3; ++b) {
    unordered.access(b, 0, 0xa00, partial + 4 * b, 4, kStore);
    if (b != 2) unordered.access(b, 0, 0xa10, done, 4, kAtomicAdd);
  }
  for (unsigned b = 0; b < 3; ++b) unordered.access(3, 1, 0xa20, partial + 4 * b, 4, kLoad);
  expect("a partial read with no count of its block: a race", unordered, true);
}

void reductions() {
  // reduction.cu: thread 0 of each block adds its partial sum, plainly.
  Launch racy(4, 64);
  for (unsigned b = 0; b < 4; ++b) {
    racy.access(b, 0, 0xa00, kBase, 4, kLoad);
    racy.access(b, 0, 0xa10, kBase, 4, kStore);
  }
  expect("reduction: partial sums added without an atomic", racy, true);
  Launch atomic(4, 64);
  for (unsigned b = 0; b < 4; ++b) atomic.access(b, 0, 0xa00, kBase, 4, kAtomicAdd);
  expect("reduction_atomic: atomicAdd", atomic, false);
  // histogram.cu: threads of two blocks increment 16 bins.
  Launch bins(2, 32);
  for (unsigned b = 0; b < 2; ++b)
    for (unsigned t = 0; t < 32; ++t) {
      bins.access(b, t, 0xb00, kBase + 4 * (t % 16), 4, kLoad);
      bins.access(b, t, 0xb10, kBase + 4 * (t % 16), 4, kStore);
    }
  expect("histogram: a bin without its atomic", bins, true);
  Launch atomic_bins(2, 32);
  for (unsigned b = 0; b < 2; ++b)
    for (unsigned t = 0; t < 32; ++t) atomic_bins.access(b, t, 0xb00, kBase + 4 * (t % 16), 4, kAtomicAdd);
  expect("histogram_atomic: atomicAdd", atomic_bins, false);
  // grid_stride_overlap.cu: a stride of one block, so every block walks
  // the others' elements; grid_stride.cu: the grid's stride.
  Launch overlap(4, 32);
  for (unsigned b = 0; b < 4; ++b)
    for (unsigned t = 0; t < 32; ++t)
      for (unsigned i = b * 32 + t; i < 128; i += 32) overlap.access(b, t, 0xc00, kBase + 4 * i, 4, kStore);
  expect("grid_stride_overlap: a block's stride", overlap, true);
  Launch stride(4, 32);
  for (unsigned b = 0; b < 4; ++b)
    for (unsigned t = 0; t < 32; ++t)
      for (unsigned i = b * 32 + t; i < 512; i += 128) stride.access(b, t, 0xc00, kBase + 4 * i, 4, kStore);
  expect("grid_stride: the grid's stride", stride, false);
}

}  // namespace

int main() {
  counters();
  neighbours();
  tiles();
  others();
  across_blocks();
  reductions();
  return failures == 0 ? 0 : 1;
}
