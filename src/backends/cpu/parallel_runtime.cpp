// See parallel_runtime.h.
#include "backends/cpu/parallel_runtime.h"

#include "support/env.h"

#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <thread>
#include <mutex>
#include <shared_mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace stagepy::backends::cpu {

namespace {
int env_threads() {
  static const int n = [] {
    long k = env_long("STAGEPY_THREADS", 0);
    if (k <= 0) k = (long)std::thread::hardware_concurrency();
    return (int)std::max(1L, k);
  }();
  return n;
}
std::atomic<int> chosen{0};  // set_threads(); 0: the default
}  // namespace

int default_threads() {
  int k = chosen.load(std::memory_order_relaxed);
  return k > 0 ? k : env_threads();
}

void set_threads(int n) { chosen.store(n > 0 ? n : 0, std::memory_order_relaxed); }

namespace {
// quick body -> full body. Looked up for every chunk while it is not empty (a handful of
// entries: the kernels compiled in the last moments).
struct Upgrades {
  std::shared_mutex mutex;
  std::unordered_map<ParallelBody, ParallelBody> to;
  std::atomic<size_t> size{0};
};
Upgrades& upgrades() {
  static Upgrades* u = new Upgrades();  // never destroyed: kernels may run during exit
  return *u;
}
}  // namespace

void set_parallel_body_upgrade(ParallelBody quick, ParallelBody full) {
  Upgrades& u = upgrades();
  std::unique_lock<std::shared_mutex> lock(u.mutex);
  if (full) u.to[quick] = full;
  else u.to.erase(quick);
  u.size.store(u.to.size(), std::memory_order_release);
}

namespace {
// GNU OpenMP's threads do not survive fork(): in a child of a process whose kernels used
// them, the next parallel region waits for them forever. Such a child runs parallel loops
// on its one thread, chunk by chunk as the threads would have (same records, same results).
std::atomic<bool> omp_started{false};
std::atomic<bool> omp_lost{false};
void forked_child() {
  if (omp_started.load()) omp_lost.store(true);
}
[[maybe_unused]] const bool fork_hook = [] {
  pthread_atfork(nullptr, nullptr, forked_child);
  return true;
}();

// Threads that start late (parallel_runtime.h, Contention).
std::atomic<int64_t> caller_until_ns{0};  // regions run on the caller until then
std::atomic<int64_t> backoff_ns{0};       // the next back-off
std::atomic<uint64_t> late_regions{0}, on_caller_regions{0};
std::atomic<int64_t> last_end_ns{0};  // when the last region on the threads ended
std::atomic<int> late_streak{0};      // regions in a row (each soon after the last) found late
constexpr int64_t kCalm_ns = 200'000, kIdle_ns = 2'000'000;
constexpr int64_t kFirstBackoff_ns = 20'000'000, kMaxBackoff_ns = 1'000'000'000;
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// After a region that started at t0 and ended at t1, its last thread starting at `last`.
void note_region(int64_t t0, int64_t last, int64_t t1) {
  // Threads left idle for a while sleep, and waking them (a hypervisor's halted vCPUs, the
  // first region's thread creation) can take milliseconds on a machine with every core
  // free: a late start after an idle spell says nothing of busy cores. (On a 16-core VM
  // the first region after each second of CPython work was late, and sent the next ones
  // to the calling thread.)
  const int64_t idle = t0 - last_end_ns.exchange(t1, std::memory_order_relaxed);
  if (idle > kIdle_ns) return;
  // STAGEPY_LATE_THREADS_MS: how late a thread must start to count (0: never), 1 ms unless set.
  static const int64_t late_ns = env_long("STAGEPY_LATE_THREADS_MS", 1) * 1'000'000;
  const int64_t late = last - t0;
  if (late_ns > 0 && late > late_ns && 2 * late > t1 - t0) {
    late_regions.fetch_add(1, std::memory_order_relaxed);
    // One late region alone (a hypervisor's hiccup: on the 16-core GPU host a few a minute
    // on idle cores) is not busy cores; two in a row are.
    if (late_streak.fetch_add(1, std::memory_order_relaxed) < 1) return;
    const int64_t b = std::clamp(2 * backoff_ns.load(std::memory_order_relaxed), kFirstBackoff_ns, kMaxBackoff_ns);
    backoff_ns.store(b, std::memory_order_relaxed);
    caller_until_ns.store(t1 + b, std::memory_order_relaxed);
  } else {
    late_streak.store(0, std::memory_order_relaxed);
    if (late < kCalm_ns) backoff_ns.store(0, std::memory_order_relaxed);
  }
}

ParallelBody current_body(ParallelBody body) {
  Upgrades& u = upgrades();
  if (u.size.load(std::memory_order_acquire) == 0) return body;
  std::shared_lock<std::shared_mutex> lock(u.mutex);
  auto it = u.to.find(body);
  return it == u.to.end() ? body : it->second;
}
}  // namespace

int64_t* min_parallel_cost_address() {
  static int64_t cost = env_long("STAGEPY_MIN_PARALLEL_COST", 32768);
  return &cost;
}

Contention contention() {
  return {late_regions.load(std::memory_order_relaxed), on_caller_regions.load(std::memory_order_relaxed)};
}

void force_contended(double seconds) {
  caller_until_ns.store(seconds > 0 ? now_ns() + (int64_t)(seconds * 1e9) : 0, std::memory_order_relaxed);
}

}  // namespace stagepy::backends::cpu

extern "C" int32_t stagepy_parallel_for(stagepy::backends::cpu::ParallelBody body, void* ctx, int64_t k0,
                                        int64_t trip, int64_t threads) {
  const int64_t n = trip - k0;
  if (n <= 0) return 0;
  // In order (threads < 0): -threads contiguous blocks, block c into record c, whichever
  // thread runs it. Else about four chunks per thread, enough to balance a triangular nest
  // and few enough that each thread sweeps long contiguous runs, dealt round-robin, each
  // thread's into its own record.
  const bool in_order = threads < 0;
  if (in_order) threads = -threads;
  if (threads > n) threads = n;
  int64_t chunk = in_order ? (n + threads - 1) / threads : n / (threads * 4);
  if (chunk < 1) chunk = 1;
  // Thread `tid` of `nt`: its chunks in turn until one returns a status; that chunk and status.
  auto run_chunks = [&](int64_t tid, int64_t nt) -> std::pair<int64_t, int32_t> {
    for (int64_t c = tid; k0 + c * chunk < trip; c += nt) {
      const int64_t lo = k0 + c * chunk;
      // The same body fully optimized, once it is there (tier-up: both run the same IR).
      int32_t st = stagepy::backends::cpu::current_body(body)(ctx, lo, std::min(lo + chunk, trip), in_order ? c : tid);
      if (st) return {c, st};
    }
    return {INT64_MAX, 0};
  };
  int32_t status = 0;
  int64_t failed = INT64_MAX;  // the first chunk that returned a status
  namespace cpu = stagepy::backends::cpu;
  const bool lost = cpu::omp_lost.load(std::memory_order_relaxed);
  const int64_t t0 = cpu::now_ns();
  if (lost || t0 < cpu::caller_until_ns.load(std::memory_order_relaxed)) {
    if (!lost) cpu::on_caller_regions.fetch_add(1, std::memory_order_relaxed);
    for (int64_t tid = 0; tid < threads; tid++) {
      const std::pair<int64_t, int32_t> r = run_chunks(tid, threads);
      if (r.first < failed) failed = r.first, status = r.second;
    }
    return status;
  }
  cpu::omp_started.store(true, std::memory_order_relaxed);
  std::atomic<int64_t> last_start{t0};
#pragma omp parallel num_threads((int)threads)
  {
    const int64_t start = cpu::now_ns();
    int64_t seen = last_start.load(std::memory_order_relaxed);
    while (start > seen && !last_start.compare_exchange_weak(seen, start, std::memory_order_relaxed)) {
    }
    const std::pair<int64_t, int32_t> r = run_chunks(omp_get_thread_num(), omp_get_num_threads());
    if (r.second) {
#pragma omp critical(stagepy_parallel_status)
      if (r.first < failed) failed = r.first, status = r.second;
    }
  }
  cpu::note_region(t0, last_start.load(std::memory_order_relaxed), cpu::now_ns());
  return status;
}

extern "C" void stagepy_rank_parallel_warnings(const int64_t* results, int64_t threads, int64_t record,
                                               int64_t offset, int64_t n, int64_t* rank) {
  std::vector<std::tuple<int64_t, int64_t>> seen;  // (first iteration, index)
  for (int64_t i = 0; i < n; i++) {
    int64_t first = INT64_MAX;
    for (int64_t t = 0; t < threads; t++) first = std::min(first, results[t * record + offset + i]);
    rank[i] = 0;
    if (first != INT64_MAX) seen.emplace_back(first, i);
  }
  std::sort(seen.begin(), seen.end());
  for (size_t r = 0; r < seen.size(); r++) rank[std::get<1>(seen[r])] = (int64_t)r + 1;
}

extern "C" void* stagepy_private_copies(int64_t bytes, int32_t fill) {
  if (bytes <= 0) bytes = 4096;
  const size_t n = ((size_t)bytes + 4095) / 4096 * 4096;
  void* p = std::aligned_alloc(4096, n);
  if (p) stagepy_private_reset(p, (int64_t)n, fill);
  return p;
}

extern "C" void stagepy_private_reset(void* p, int64_t bytes, int32_t fill) {
  const size_t n = (size_t)bytes;
  if (fill == 1) {
    double* d = static_cast<double*>(p);
    for (size_t k = 0; k < n / sizeof(double); k++) d[k] = -0.0;
  } else if (fill == 2) {
    float* f = static_cast<float*>(p);
    for (size_t k = 0; k < n / sizeof(float); k++) f[k] = -0.0f;
  } else {
    std::memset(p, 0, n);
  }
}

extern "C" void stagepy_private_free(void* p) { std::free(p); }
