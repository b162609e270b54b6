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
constexpr uint32_t kAtomicAdd = SANITIZER_MEMORY_DEVICE_FLAG_ATOMSYS | SANITIZER_MEMORY_DEVICE_FLAG_SCOPE_GPU |
                             SANITIZER_MEMORY_DEVICE_FLAG_READ | SANITIZER_MEMORY_DEVICE_FLAG_WRITE;

// One launch's state on the host, as the tool's host side lays it out.
struct Launch {
  std::vector<unsigned> epochs;
  std::vector<Word> words;
  std::vector<Pair> pairs;
  State state{};

  Launch(unsigned blocks, unsigned threads) : epochs(blocks * threads), words(1u << 12), pairs(1u << 8) {
    state.enabled = 1;
    state.threads_per_block = threads;
    state.threads = blocks * threads;
    state.words_capacity = static_cast<unsigned>(words.size());
    state.pairs_capacity = static_cast<unsigned>(pairs.size());
    state.epochs = epochs.data();
    state.words = words.data();
    state.pairs = pairs.data();
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

}  // namespace

int main() {
  counters();
  neighbours();
  tiles();
  others();
  return failures == 0 ? 0 : 1;
}
