// What the device patches and the host library share: the layout of one
// launch's state in device memory. See docs/global-race.md.
#pragma once
#include <stdint.h>

namespace global_race {

// One 4-byte word's last plain-or-atomic write and last read, each packed
// in 64 bits: tid (32) | epoch (26) | byte mask (4) | atomic (1) | valid (1).
struct Word {
  unsigned long long key;  // the word's address; 0: empty
  unsigned long long write;
  unsigned long long read;
  unsigned long long write_pc;
  unsigned long long read_pc;
  unsigned int write_stamp;  // the writer's block clock when it wrote
  unsigned int read_stamp;   // the reader's block clock when it read
};

// One pair of places that raced, with its first example and a count.
struct Pair {
  unsigned long long pc_first;   // the earlier access
  unsigned long long pc_second;  // the one that met it
  unsigned long long address;
  unsigned int tid_first;
  unsigned int tid_second;
  unsigned int kind;  // 0 write-write, 1 read-then-write, 2 write-then-read
  unsigned int count;
};

// The launch's state: the header first, then the per-thread epochs, the
// shadow table and the pairs, each where the offsets say.
struct State {
  unsigned int enabled;
  unsigned int threads_per_block;
  unsigned int threads;         // epochs held
  unsigned int words_capacity;  // a power of two
  unsigned int pairs_capacity;  // a power of two
  unsigned int saw_atomic;      // a GPU- or system-scope atomic ran
  unsigned int blocks;          // blocks with a clock; 0: blocks are not ordered
  unsigned int sync_capacity;   // words synchronised on (a power of two)
  unsigned int flags_seen;      // every access flag the launch's accesses carried
  unsigned long long words_used;
  unsigned long long words_dropped;  // accesses to words the table had no room for
  unsigned long long pairs_dropped;  // races of pairs the table had no room for
  unsigned long long sync_dropped;   // atomics on words the sync table had no room for
  unsigned int *epochs;
  Word *words;
  Pair *pairs;
  // Blocks ordered through atomics: block b's vector clock is
  // clocks[b * blocks ...]; its own entry is one less than its clock.
  unsigned int *clocks;
  // Each word an atomic touched: its key, and the clock released into it.
  unsigned long long *sync_keys;
  unsigned int *sync_clocks;  // sync_capacity rows of `blocks`
  // Per block, the sync row its last atomic touched and the thread that
  // made it: (tid << 32) | (row + 1), 0 for none. That thread acquires the
  // row again at its next access or barrier (see patches.cu's `deferred`).
  unsigned long long *pending;
};

constexpr unsigned kWrite = 0, kReadWrite = 1, kWriteRead = 2;

}  // namespace global_race
