// The host side of the global-race tool, loaded into the program with
// LD_PRELOAD, as NVIDIA's compute-sanitizer-samples are. On each module load it patches every
// global memory access and barrier with the device functions of
// patches.fatbin (found beside this library) and keeps the module's cubin;
// around each launch it gives the kernel a cleared state (shadow.h) and
// writes what the launch found as one JSON line:
//
//   $CUDAWATCH_GLOBAL_RACE_OUT/global-race.jsonl
//   $CUDAWATCH_GLOBAL_RACE_OUT/modules/<n>.cubin
//
// A launch is checked whole, in part (its words outgrew the table: said),
// or not at all (more threads than the epochs held: said). Launches are
// serialised (each waits for its kernel), as racecheck's are.
#include <dlfcn.h>
#include <sanitizer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "shadow.h"

using namespace global_race;

namespace {

constexpr unsigned kMaxThreads = 16u << 20;     // epochs: 64 MiB
constexpr unsigned kWordsCapacity = 1u << 22;   // 4 Mi words: 160 MiB
constexpr unsigned kPairsCapacity = 1u << 12;
constexpr unsigned kClockBlocks = 1024;        // block clocks: 4 MiB
constexpr unsigned kSyncCapacity = 256;        // words synchronised on: 1 MiB

struct Buffers {
  void *device = nullptr;  // State, then epochs, words, pairs
  size_t bytes = 0;
  State host{};  // what is copied to the device: it must outlive the copy
  std::string dims;  // the launch's grid and block, as its begin saw them
};

struct Tool {
  std::mutex lock;
  std::string out;
  FILE *lines = nullptr;
  std::string patches;
  std::map<CUcontext, bool> patched_context;
  std::map<CUcontext, Buffers> buffers;
  std::map<CUmodule, unsigned> modules;
  unsigned long long launches = 0;
};

Tool &tool() {
  static Tool t;
  return t;
}

// Text in a JSON string: quotes, backslashes and control characters escaped.
std::string json_text(const char *s) {
  std::string out;
  for (; s != nullptr && *s; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void say(const std::string &line) {
  Tool &t = tool();
  if (t.lines == nullptr) return;
  std::fputs(line.c_str(), t.lines);
  std::fputc('\n', t.lines);
  std::fflush(t.lines);
}

// CUDAWATCH_GLOBAL_RACE_TRACE=1: each step on stderr, flushed, before it
// is taken (where a program dies inside the tool, the last line says where).
bool tracing() {
  static const bool on = std::getenv("CUDAWATCH_GLOBAL_RACE_TRACE") != nullptr;
  return on;
}

void trace(const char *step, const void *what = nullptr) {
  if (!tracing()) return;
  std::fprintf(stderr, "global-race: %s %p\n", step, what);
  std::fflush(stderr);
}

// CUDAWATCH_GLOBAL_RACE_SKIP=patch (no module patched) or =launch (no
// launch given a state): for finding which part a crash is in.
bool skipping(const char *part) {
  const char *skip = std::getenv("CUDAWATCH_GLOBAL_RACE_SKIP");
  return skip != nullptr && std::strcmp(skip, part) == 0;
}

void said_error(const char *what, SanitizerResult r) {
  const char *text = nullptr;
  sanitizerGetResultString(r, &text);
  say(std::string("{\"error\": \"") + json_text(what) + ": " + json_text(text) + "\"}");
}

// Patches a module as it loads, and keeps its cubin for the lines.
void module_loaded(const Sanitizer_ResourceModuleData *m) {
  Tool &t = tool();
  std::lock_guard<std::mutex> guard(t.lock);
  trace("module loaded", m->module);
  if (skipping("patch")) return;
  if (!t.patched_context[m->context]) {
    trace("adding patches", m->context);
    SanitizerResult r = sanitizerAddPatchesFromFile(t.patches.c_str(), m->context);
    if (r != SANITIZER_SUCCESS) return said_error("loading patches.fatbin", r);
    t.patched_context[m->context] = true;
  }
  trace("patching accesses", m->module);
  sanitizerPatchInstructions(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, m->module, "GlobalRaceAccess");
  trace("patching barriers", m->module);
  sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BARRIER, m->module, "GlobalRaceBarrier");
  trace("patching the module", m->module);
  SanitizerResult r = sanitizerPatchModule(m->module);
  if (r != SANITIZER_SUCCESS) return said_error("patching a module", r);
  trace("patched", m->module);
  unsigned n = static_cast<unsigned>(t.modules.size());
  t.modules[m->module] = n;
  std::string path = t.out + "/modules/" + std::to_string(n) + ".cubin";
  if (m->pCubin == nullptr || m->cubinSize == 0) return;
  if (FILE *f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(m->pCubin, 1, m->cubinSize, f);
    std::fclose(f);
  }
}

size_t bytes_for(unsigned threads) {
  return sizeof(State) + size_t(threads) * sizeof(unsigned) + size_t(kWordsCapacity) * sizeof(Word) +
         size_t(kPairsCapacity) * sizeof(Pair) + size_t(kClockBlocks) * kClockBlocks * sizeof(unsigned) +
         size_t(kSyncCapacity) * sizeof(unsigned long long) +
         size_t(kSyncCapacity) * kClockBlocks * sizeof(unsigned) +
         size_t(kClockBlocks) * sizeof(unsigned long long);
}

// The launch's state: cleared, its pointers set, given to the kernel.
void launch_begin(const Sanitizer_LaunchData *l) {
  Tool &t = tool();
  trace("launch begins", l->function);
  if (skipping("launch")) return;
  t.lock.lock();  // held until the launch's end: one launch at a time
  unsigned per_block = l->blockDim_x * l->blockDim_y * l->blockDim_z;
  unsigned long long threads =
      (unsigned long long)per_block * l->gridDim_x * l->gridDim_y * l->gridDim_z;
  Buffers &b = t.buffers[l->context];
  // The launch's end gives no dimensions (zeros, seen on an H200): kept here.
  b.dims = "\"grid\": [" + std::to_string(l->gridDim_x) + ", " + std::to_string(l->gridDim_y) + ", " +
           std::to_string(l->gridDim_z) + "], \"block\": [" + std::to_string(l->blockDim_x) + ", " +
           std::to_string(l->blockDim_y) + ", " + std::to_string(l->blockDim_z) + "]";
  State &state = b.host;
  state = State{};
  state.enabled = threads <= kMaxThreads;
  state.threads_per_block = per_block;
  state.threads = state.enabled ? static_cast<unsigned>(threads) : 0;
  state.words_capacity = kWordsCapacity;
  state.pairs_capacity = kPairsCapacity;
  size_t need = bytes_for(kMaxThreads);
  if (b.device == nullptr) {
    SanitizerResult r = sanitizerAlloc(l->context, &b.device, need);
    if (r != SANITIZER_SUCCESS) {
      b.device = nullptr;
      said_error("allocating the shadow memory", r);
      return;
    }
    b.bytes = need;
  }
  char *base = static_cast<char *>(b.device);
  state.epochs = reinterpret_cast<unsigned *>(base + sizeof(State));
  state.words = reinterpret_cast<Word *>(base + sizeof(State) + size_t(kMaxThreads) * sizeof(unsigned));
  state.pairs = reinterpret_cast<Pair *>(reinterpret_cast<char *>(state.words) +
                                         size_t(kWordsCapacity) * sizeof(Word));
  // Blocks are ordered through atomics in grids of up to kClockBlocks
  // blocks; larger grids are checked within blocks, and say so.
  unsigned long long blocks = (unsigned long long)l->gridDim_x * l->gridDim_y * l->gridDim_z;
  state.blocks = blocks <= kClockBlocks ? static_cast<unsigned>(blocks) : 0;
  state.sync_capacity = kSyncCapacity;
  state.clocks = reinterpret_cast<unsigned *>(state.pairs + kPairsCapacity);
  state.sync_keys =
      reinterpret_cast<unsigned long long *>(state.clocks + size_t(kClockBlocks) * kClockBlocks);
  state.sync_clocks = reinterpret_cast<unsigned *>(state.sync_keys + kSyncCapacity);
  state.pending = reinterpret_cast<unsigned long long *>(state.sync_clocks + size_t(kSyncCapacity) * kClockBlocks);
  trace("clearing the state", b.device);
  sanitizerMemset(b.device, 0, b.bytes, l->hStream);
  sanitizerMemcpyHostToDeviceAsync(b.device, &state, sizeof state, l->hStream);
  sanitizerSetLaunchCallbackData(l->hLaunch, l->function, l->hStream, b.device);
}

// What the launch found, as one line; then the next launch may begin.
void launch_end(const Sanitizer_LaunchData *l) {
  Tool &t = tool();
  trace("launch ends", l->function);
  if (skipping("launch")) return;
  Buffers &b = t.buffers[l->context];
  if (b.device == nullptr) {
    t.lock.unlock();
    return;
  }
  sanitizerStreamSynchronize(l->hStream);
  State state{};
  sanitizerMemcpyDeviceToHost(&state, b.device, sizeof state, l->hStream);
  std::vector<Pair> pairs(kPairsCapacity);
  sanitizerMemcpyDeviceToHost(pairs.data(), state.pairs, pairs.size() * sizeof(Pair), l->hStream);
  uint64_t start = 0, size = 0;
  sanitizerGetFunctionPcAndSize(l->module, l->functionName, &start, &size);
  auto module = t.modules.find(l->module);
  std::string line = "{\"launch\": " + std::to_string(t.launches++) + ", \"kernel\": \"" +
                     json_text(l->functionName) + "\", \"module\": " +
                     (module == t.modules.end() ? std::string("null") : std::to_string(module->second)) +
                     ", " + b.dims + ", \"checked\": " + (state.enabled ? "true" : "false") +
                     ", \"words\": " + std::to_string(state.words_used) +
                     ", \"words_dropped\": " + std::to_string(state.words_dropped) +
                     ", \"pairs_dropped\": " + std::to_string(state.pairs_dropped) +
                     ", \"saw_atomic\": " + (state.saw_atomic ? "true" : "false") +
                     ", \"blocks_ordered\": " + (state.blocks != 0 ? "true" : "false") +
                     ", \"sync_dropped\": " + std::to_string(state.sync_dropped) +
                     ", \"flags_seen\": " + std::to_string(state.flags_seen) + ", \"races\": [";
  // An instruction's offset in the kernel, or null where the pc is not
  // the kernel's: an access's word is published before its pc, so a
  // thread that meets it in between reads the pc as 0 (seen on an H200).
  auto offset = [&](uint64_t pc) {
    bool in_kernel = pc != 0 && pc >= start && (size == 0 || pc - start < size);
    return in_kernel ? std::to_string(pc - start) : std::string("null");
  };
  bool first = true;
  for (const Pair &p : pairs) {
    if (p.count == 0) continue;
    static const char *kinds[] = {"write-write", "read-write", "write-read"};
    line += std::string(first ? "" : ", ") + "{\"kind\": \"" + kinds[p.kind % 3] +
            "\", \"first\": {\"offset\": " + offset(p.pc_first) +
            ", \"thread\": " + std::to_string(p.tid_first) + "}, \"second\": {\"offset\": " +
            offset(p.pc_second) + ", \"thread\": " + std::to_string(p.tid_second) +
            "}, \"address\": " + std::to_string(p.address) + ", \"count\": " + std::to_string(p.count) + "}";
    first = false;
  }
  line += "]}";
  say(line);
  t.lock.unlock();
}

void callback(void *, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void *data) {
  // The tool's own memset and copies must not re-enter it (the launch's
  // lock is held from its begin to its end).
  if (tracing()) {
    std::fprintf(stderr, "global-race: callback %d/%d\n", int(domain), int(cbid));
    std::fflush(stderr);
  }
  // sanitizerIsInsideRecursiveCallback is new in 2026.x: looked up, so
  // that the tool builds and runs with the toolkit's older API too.
  using Inside = SanitizerResult (*)(uint32_t *);
  static const Inside is_inside =
      reinterpret_cast<Inside>(dlsym(RTLD_DEFAULT, "sanitizerIsInsideRecursiveCallback"));
  uint32_t inside = 0;
  if (is_inside != nullptr && is_inside(&inside) == SANITIZER_SUCCESS && inside) return;
  trace("not recursive");
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE && cbid == SANITIZER_CBID_RESOURCE_MODULE_LOADED) {
    module_loaded(static_cast<const Sanitizer_ResourceModuleData *>(data));
  } else if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_BEGIN) {
    launch_begin(static_cast<const Sanitizer_LaunchData *>(data));
  } else if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_END) {
    launch_end(static_cast<const Sanitizer_LaunchData *>(data));
  }
}

// patches.fatbin beside this library.
std::string patches_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&patches_path), &info) == 0 || info.dli_fname == nullptr)
    return "patches.fatbin";
  std::string self = info.dli_fname;
  size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/patches.fatbin";
}

}  // namespace

namespace {

// Opens the output and subscribes to the callbacks.
int subscribe() {
  Tool &t = tool();
  const char *out = std::getenv("CUDAWATCH_GLOBAL_RACE_OUT");
  t.out = out != nullptr ? out : ".";
  ::mkdir(t.out.c_str(), 0755);
  ::mkdir((t.out + "/modules").c_str(), 0755);
  t.lines = std::fopen((t.out + "/global-race.jsonl").c_str(), "a");
  t.patches = patches_path();
  say("{\"tool\": \"cudawatch-global-race\", \"version\": 1, \"pid\": " + std::to_string(::getpid()) + "}");
  if (skipping("subscribe")) return 0;
  Sanitizer_SubscriberHandle handle;
  trace("subscribing");
  SanitizerResult r = sanitizerSubscribe(&handle, callback, nullptr);
  if (r != SANITIZER_SUCCESS) {
    said_error("subscribing", r);
    return 0;
  }
  trace("enabling resource callbacks");
  sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_RESOURCE);
  trace("enabling launch callbacks");
  sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_LAUNCH);
  trace("initialised");
  return 0;
}

// Subscribes as the library loads (LD_PRELOAD), before the program's
// first CUDA call, as NVIDIA's samples do. Named by CUDA_INJECTION64_PATH
// instead, the program crashed at its first callback (H200, driver 580,
// the 2026.4 Sanitizer API, 2026-11-28).
__attribute__((constructor)) void loaded() { subscribe(); }

}  // namespace
