// See gpu_runtime.h.
#include "backends/gpu/gpu_runtime.h"

#include <algorithm>
#include <condition_variable>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace stagepy::backends::gpu {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// A positive whole number from the environment (a measuring knob), or `fallback`.
size_t env_size(const char* name, size_t fallback) {
  const size_t v = std::strtoull(env(name).c_str(), nullptr, 10);
  return v ? v : fallback;
}

std::atomic<int> g_target{-1};

Target parse_target() {
  std::string t = env("STAGEPY_TARGET");
  if (t == "cpu") return Target::Cpu;
  if (t == "gpu") return Target::Gpu;
  return Target::Auto;
}

// ---------------------------------------------------------------- host copies
// Copies with non-temporal stores where the CPU has them (x86-64: SSE2's streaming
// stores): the destination, a staging buffer or an array being sent back, is not read
// again soon, and stores that bypass the cache do not first read each line they write.
// `STAGEPY_GPU_STAGING_NT=0` copies with memcpy (to compare).
void stream_copy(void* dst, const void* src, size_t n) {
#if defined(__x86_64__)
  static const bool nt = env("STAGEPY_GPU_STAGING_NT") != "0";
  if (nt && n >= 4096) {
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
    const size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
    std::memcpy(d, s, head);
    d += head, s += head, n -= head;
    size_t k = 0;
    for (; k + 64 <= n; k += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k + 32));
      const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + k), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + k + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + k + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + k + 48), e);
    }
    std::memcpy(d + k, s + k, n - k);
    _mm_sfence();  // the streamed stores are visible before the copy is said to be done
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

// Helper threads for copy_on_threads, started on the first large copy and kept for the
// process (each chunk of a staged copy used to start and join its own threads). A copy
// gives each helper one part and does the first part itself. Between parts the helpers,
// and the caller waiting for them, spin for 500 microseconds (STAGEPY_GPU_STAGING_SPIN_US)
// before they sleep: a copy's chunks come tens of microseconds apart, and a sleeping
// thread is slow to wake. On an H200 (docs/benchmarks.md, stop 42) copies of 16-32 MB
// back went from 22-28 to 29-34 GB/s, Mandelbrot's warm call from 0.84-1.23 to 0.67-0.74 ms;
// 128 MB and more did not change.
class Copiers {
 public:
  static double spin_s() {
    static const double s = (double)env_size("STAGEPY_GPU_STAGING_SPIN_US", 500) * 1e-6;
    return s;
  }
  // Spins until done() or spin_s() have passed; whether done().
  template <class F>
  static bool spin_until(F done) {
    if (spin_s() <= 0) return done();
    const double t0 = now_s();
    for (unsigned k = 0;; k++) {
      if (done()) return true;
      if ((k & 63) == 63 && now_s() - t0 > spin_s()) return false;
#if defined(__x86_64__)
      _mm_pause();
#endif
    }
  }
  void copy(void* dst, const void* src, size_t n) {
    std::lock_guard<std::mutex> one_at_a_time(busy_);
    const size_t hw = std::max(1u, std::thread::hardware_concurrency());
    // At least 256 KB each (or STAGEPY_GPU_STAGING_PART_KB, for measuring): an 8 MB copy's
    // 2 MB chunks on 8 threads, not 2 (docs/benchmarks.md, stop 39: 1 MB parts left copies
    // of 2-16 MB at 8-23 GB/s on an H200, 256 KB parts gave 15-31).
    static const size_t part_min = env_size("STAGEPY_GPU_STAGING_PART_KB", 256) << 10;
    const size_t parts = std::min<size_t>({hw, 16, n / part_min});
    if (parts <= 1) {
      stream_copy(dst, src, n);
      return;
    }
    std::unique_lock<std::mutex> g(mu_);
    while (helpers_.size() + 1 < parts) helpers_.emplace_back([this, id = helpers_.size()] { serve(id); });
    const size_t step = (n / parts + 63) & ~size_t(63);
    job_ = Job{static_cast<char*>(dst), static_cast<const char*>(src), n, step, parts};
    pending_.store(parts - 1);
    generation_.fetch_add(1);
    g.unlock();
    wake_.notify_all();
    stream_copy(dst, src, std::min(step, n));
    if (spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; })) return;
    g.lock();
    done_.wait(g, [this] { return pending_.load() == 0; });
  }

 private:
  struct Job {
    char* dst = nullptr;
    const char* src = nullptr;
    size_t n = 0, step = 0, parts = 0;
  };
  void serve(size_t id) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
      if (generation_.load() == seen) {
        g.unlock();
        spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
        g.lock();
      }
      wake_.wait(g, [&] { return generation_.load() != seen; });
      seen = generation_.load();
      const Job j = job_;
      const size_t part = id + 1;
      if (part >= j.parts) continue;  // a smaller copy: not this helper's turn
      g.unlock();
      const size_t off = part * j.step;
      if (off < j.n) stream_copy(j.dst + off, j.src + off, std::min(j.step, j.n - off));
      g.lock();
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify_one();
    }
  }
  std::mutex busy_, mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> helpers_;  // detached at exit with the process (never joined)
  Job job_;
  std::atomic<uint64_t> generation_{0};  // (changed under mu_; read without it while spinning)
  std::atomic<size_t> pending_{0};

 public:
  ~Copiers() = delete;  // lives for the process
};

Copiers& copiers() {
  static Copiers* c = new Copiers();
  return *c;
}

// ---------------------------------------------------------------- staged copies
// The driver copies pageable host memory through small pinned buffers of its own, one at a
// time: 8.5 GB/s to an H100 and 4.1 GB/s back (docs/benchmarks.md). A large copy goes through
// stagepy's own pinned buffers instead, in chunks, so that the host's copy of one chunk
// (on several threads) overlaps the DMA engine's transfer of the previous one. Emulating,
// the same pipeline runs with host buffers and plain copies (so CI runs its chunking).
//
// Sizes from a sweep on an H200 (16 cores; docs/benchmarks.md): two buffers, up to 16 host
// threads, chunks of a quarter of the copy (4 to 64 MB) so that even an 8 MB copy overlaps.
// 256 MB went up at 37 GB/s and back at 35 (the device's own pinned figure: 55). Pinning
// costs about 0.56 ms per MB (36 ms for 64 MB on the H200), so the buffers are only as
// large as the chunks copied so far need: a first call copying 12 MB pins 8 MB, not 128.
class Staging {
 public:
  // Smaller copies take the driver's path (1 MB, or STAGEPY_GPU_STAGING_MIN_MB for
  // measuring; from 2 MB on, staged copies were faster than the driver's 8-11 GB/s).
  static size_t min_bytes() {
    static const size_t bytes = env_size("STAGEPY_GPU_STAGING_MIN_MB", 1) << 20;
    return bytes;
  }
  static constexpr size_t kBuffer = size_t(64) << 20;
  static constexpr int kBuffers = 2;

  // 1: copied; 0: no staging here (the caller copies directly); -1: failed, *err says why.
  int h2d(CUdeviceptr d, const void* h, size_t n, std::string* err) {
    std::lock_guard<std::mutex> g(mu_);
    if (!ready()) return 0;
    const size_t chunk = chunk_for(n);
    if (!buffers(chunk)) return 0;  // no pinned memory to spare: the driver's own copies
    const size_t chunks = (n + chunk - 1) / chunk;
    for (size_t c = 0; c < chunks; c++) {
      const int b = (int)(c % kBuffers);
      const size_t off = c * chunk, len = std::min(chunk, n - off);
      if (c >= (size_t)kBuffers && !wait(b, err)) return -1;  // its previous transfer is done
      copy_on_threads(buf_[b], (const char*)h + off, len);
      if (!to_device(d + off, buf_[b], len, b, err)) return -1;
    }
    return drain(err) ? 1 : -1;
  }
  int d2h(void* h, CUdeviceptr d, size_t n, std::string* err) {
    std::lock_guard<std::mutex> g(mu_);
    if (!ready()) return 0;
    const size_t chunk = chunk_for(n);
    if (!buffers(chunk)) return 0;  // no pinned memory to spare: the driver's own copies
    const size_t chunks = (n + chunk - 1) / chunk;
    auto issue = [&](size_t c) {
      const size_t off = c * chunk;
      return from_device(buf_[c % kBuffers], d + off, std::min(chunk, n - off), (int)(c % kBuffers), err);
    };
    for (size_t c = 0; c < chunks && c < (size_t)kBuffers; c++)
      if (!issue(c)) return -1;
    for (size_t c = 0; c < chunks; c++) {
      const int b = (int)(c % kBuffers);
      const size_t off = c * chunk, len = std::min(chunk, n - off);
      if (!wait(b, err)) return -1;
      copy_on_threads((char*)h + off, buf_[b], len);
      if (c + kBuffers < chunks && !issue(c + kBuffers)) return -1;
    }
    return drain(err) ? 1 : -1;
  }

 private:
  std::mutex mu_;
  bool tried_ = false, ok_ = false;
  void* buf_[kBuffers] = {};
  size_t buf_bytes_ = 0;  // each buffer's size (0: none yet)
  CUevent ev_[kBuffers] = {};
  CUstream stream_ = nullptr;

  // A quarter of the copy, in whole MB, within [4 MB, kBuffer]; or
  // `STAGEPY_GPU_STAGING_CHUNK_MB` (for measuring).
  static size_t chunk_for(size_t n) {
    const size_t mb = size_t(1) << 20;
    static const size_t forced = env_size("STAGEPY_GPU_STAGING_CHUNK_MB", 0);
    if (forced) return std::clamp(forced * mb, mb, kBuffer);
    return std::clamp((n / 4 + mb - 1) / mb * mb, 4 * mb, kBuffer);
  }
  // Sets up the stream and the events once; false for good where it cannot.
  bool ready() {
    if (tried_) return ok_;
    tried_ = true;
    if (env("STAGEPY_GPU_STAGING") == "0") return false;  // the driver's own copies (to compare)
    if (emulating()) return ok_ = true;
    const Driver* d = driver();
    if (!d || !d->can_stage() || d->cuStreamCreate(&stream_, 0) != 0) return false;
    for (int b = 0; b < kBuffers; b++)
      if (d->cuEventCreate(&ev_[b], 2 /* no timing */) != 0) return false;
    return ok_ = true;
  }
  // Buffers of at least `chunk` bytes (a power of two from 4 MB): the old ones, idle
  // between copies (each copy drains the stream), give way to larger ones.
  bool buffers(size_t chunk) {
    if (chunk <= buf_bytes_) return true;
    size_t bytes = size_t(4) << 20;
    while (bytes < chunk) bytes *= 2;
    const Driver* d = emulating() ? nullptr : driver();
    for (auto& b : buf_) {
      if (b) d ? (void)d->cuMemFreeHost(b) : std::free(b);
      b = nullptr;
    }
    buf_bytes_ = 0;
    for (auto& b : buf_) {
      const bool ok = d ? d->cuMemAllocHost(&b, bytes) == 0 : (b = std::malloc(bytes)) != nullptr;
      if (!ok) {
        b = nullptr;
        return false;
      }
    }
    buf_bytes_ = bytes;
    return true;
  }
  bool check(CUresult r, const char* what, std::string* err) {
    if (r != 0) *err = std::string(what) + ": " + error_text(r);
    return r == 0;
  }
  bool to_device(CUdeviceptr d, const void* b, size_t n, int slot, std::string* err) {
    if (emulating()) {
      std::memcpy((void*)(uintptr_t)d, b, n);
      return true;
    }
    const Driver* D = driver();
    return check(D->cuMemcpyHtoDAsync(d, b, n, stream_), "copy to the device", err) &&
           check(D->cuEventRecord(ev_[slot], stream_), "cuEventRecord", err);
  }
  bool from_device(void* b, CUdeviceptr d, size_t n, int slot, std::string* err) {
    if (emulating()) {
      std::memcpy(b, (const void*)(uintptr_t)d, n);
      return true;
    }
    const Driver* D = driver();
    return check(D->cuMemcpyDtoHAsync(b, d, n, stream_), "copy from the device", err) &&
           check(D->cuEventRecord(ev_[slot], stream_), "cuEventRecord", err);
  }
  bool wait(int slot, std::string* err) {
    return emulating() || check(driver()->cuEventSynchronize(ev_[slot]), "cuEventSynchronize", err);
  }
  bool drain(std::string* err) {
    return emulating() || check(driver()->cuStreamSynchronize(stream_), "cuStreamSynchronize", err);
  }
  // A copy split over up to 16 threads (one host thread copies at a fraction of what the
  // DMA engine moves), the helpers kept between chunks (copiers()).
  static void copy_on_threads(void* dst, const void* src, size_t n) { copiers().copy(dst, src, n); }
};

Staging& staging() {
  static Staging* s = new Staging();  // lives for the process (pinned memory goes with it)
  return *s;
}

// ---------------------------------------------------------------- device memory
// Real device memory through the driver, or (emulating) host memory standing in for it.
struct Mem {
  static bool alloc(CUdeviceptr* p, size_t n, std::string* err) {
    if (emulating()) {
      void* h = std::malloc(n ? n : 1);
      *p = (CUdeviceptr)(uintptr_t)h;
      if (!h) *err = "out of host memory";
      return h != nullptr;
    }
    const Driver* d = driver();
    CUresult r = d->cuMemAlloc(p, n ? n : 1);
    if (r != 0) *err = "cuMemAlloc(" + std::to_string(n) + " bytes): " + error_text(r);
    return r == 0;
  }
  static void release(CUdeviceptr p) {
    if (emulating()) {
      std::free((void*)(uintptr_t)p);
      return;
    }
    // (None in a child forked after the parent used the GPU: its blocks are not its own.)
    if (const Driver* d = driver()) d->cuMemFree(p);
  }
  static bool h2d(CUdeviceptr d, const void* h, size_t n, std::string* err) {
    if (n >= Staging::min_bytes())
      if (int r = staging().h2d(d, h, n, err)) return r > 0;
    if (emulating()) {
      std::memcpy((void*)(uintptr_t)d, h, n);
      return true;
    }
    CUresult r = driver()->cuMemcpyHtoD(d, h, n);
    if (r != 0) *err = "copy to the device: " + error_text(r);
    return r == 0;
  }
  static bool d2h(void* h, CUdeviceptr d, size_t n, std::string* err) {
    if (n >= Staging::min_bytes())
      if (int r = staging().d2h(h, d, n, err)) return r > 0;
    if (emulating()) {
      std::memcpy(h, (void*)(uintptr_t)d, n);
      return true;
    }
    CUresult r = driver()->cuMemcpyDtoH(h, d, n);
    if (r != 0) *err = "copy from the device: " + error_text(r);
    return r == 0;
  }
};

// Blocks by size class (powers of two from 256 bytes), kept across calls up to a cap.
class Pool {
 public:
  static size_t size_class(size_t n) {
    size_t c = 256;
    while (c < n) c <<= 1;
    return c;
  }
  bool get(size_t n, CUdeviceptr* p, std::string* err) {
    const size_t c = size_class(n);
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = free_.find(c);
      if (it != free_.end()) {
        *p = it->second;
        free_.erase(it);
        cached_ -= c;
        return true;
      }
    }
    if (Mem::alloc(p, c, err)) return true;
    trim(0);  // out of memory: give the cached blocks back and try once more
    err->clear();
    return Mem::alloc(p, c, err);
  }
  void put(CUdeviceptr p, size_t n) {
    const size_t c = size_class(n);
    std::lock_guard<std::mutex> g(mu_);
    free_.emplace(c, p);
    cached_ += c;
    if (cached_ > kCap) trim_locked(kCap / 2);
  }
  void trim(size_t keep) {
    std::lock_guard<std::mutex> g(mu_);
    trim_locked(keep);
  }

 private:
  static constexpr size_t kCap = size_t(2) << 30;
  void trim_locked(size_t keep) {
    while (cached_ > keep && !free_.empty()) {
      auto it = std::prev(free_.end());  // largest first
      Mem::release(it->second);
      cached_ -= it->first;
      free_.erase(it);
    }
  }
  std::mutex mu_;
  std::multimap<size_t, CUdeviceptr> free_;
  size_t cached_ = 0;
};

Pool& pool() {
  static Pool* p = new Pool();  // lives for the process (device memory goes with it)
  return *p;
}

std::mutex g_stats_mu;
GpuStats g_stats;

// ---------------------------------------------------------------- mirrors
struct Mirror {
  uintptr_t lo = 0, hi = 0;  // host bytes [lo, hi)
  CUdeviceptr dev = 0;
  bool dirty = false;        // written on the device since it was copied there
  // Not copied there: the array the loop that made it overwrites whole (GpuArray::fresh).
  // Until that loop has run to its end the device holds garbage, never copied back.
  bool unfilled = false;
};

struct Session {
  std::vector<Mirror> mirrors;
  std::string fatal;  // a failure after device work began
  // A loop sent to the CPU's threads by the cost model, timed until stagepy_gpu_cpu_done.
  GpuLoop* cpu_loop = nullptr;
  double cpu_t0 = 0;
  int64_t cpu_n = 0;
  // The records of the last run of a loop with reductions (stagepy_gpu_records).
  std::vector<int64_t> records;
  int64_t record_count = 0;
  // The GPU loops that ran in this nest execution, and how often (GpuLoop::runs_per_session).
  std::map<GpuLoop*, int> runs;
};
thread_local Session t_session;

// Measured copy bandwidths so far (bytes per second), or a PCIe-like guess before any.
double bandwidth(double bytes, double seconds) { return seconds > 0 && bytes > (1u << 20) ? bytes / seconds : 10e9; }
double h2d_bandwidth() {
  const GpuStats st = stats();
  return bandwidth((double)st.h2d_bytes, st.h2d_s);
}
double d2h_bandwidth() {
  const GpuStats st = stats();
  return bandwidth((double)st.d2h_bytes, st.d2h_s);
}
// Bytes the host would copy back before the CPU's threads could run the loop.
size_t dirty_bytes(const Session& S) {
  size_t n = 0;
  for (auto& m : S.mirrors)
    if (m.dirty) n += m.hi - m.lo;
  return n;
}

bool copy_back(Mirror& m, std::string* err) {
  if (!m.dirty || m.unfilled) return true;  // (unfilled: the host's bytes stand)
  double t0 = now_s();
  if (!Mem::d2h((void*)m.lo, m.dev, m.hi - m.lo, err)) return false;
  m.dirty = false;
  std::lock_guard<std::mutex> g(g_stats_mu);
  g_stats.d2h_bytes += m.hi - m.lo;
  g_stats.d2h_s += now_s() - t0;
  return true;
}

// Written mirrors back to the host, all mirrors dropped.
bool flush(Session& S, std::string* err) {
  bool ok = true;
  for (auto& m : S.mirrors) {
    if (ok && !copy_back(m, err)) ok = false;
    pool().put(m.dev, m.hi - m.lo);
  }
  S.mirrors.clear();
  return ok;
}

struct Span {
  uintptr_t lo = 0, hi = 0;
  bool empty() const { return hi <= lo; }
};

Span span_of(const GpuArray& a, const int64_t* ctx) {
  Span s;
  uintptr_t data = (uintptr_t)ctx[a.slot];
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < a.ndim; d++) {
    int64_t n = ctx[a.slot + 1 + d], st = ctx[a.slot + 1 + a.ndim + d];
    if (n <= 0) return s;
    int64_t ext = (n - 1) * st;
    if (ext < 0) lo += ext;
    else hi += ext;
  }
  s.lo = data + (uintptr_t)lo;
  s.hi = data + (uintptr_t)hi + (uintptr_t)a.itemsize;
  return s;
}

const Mirror* containing(const Session& S, Span s) {
  for (auto& m : S.mirrors)
    if (m.lo <= s.lo && s.hi <= m.hi) return &m;
  return nullptr;
}

// Bytes the loop would copy to the device now (arrays not mirrored yet).
size_t bytes_to_move(const Session& S, const GpuLoop& L, const int64_t* ctx, size_t* back = nullptr) {
  size_t n = 0, out = 0;
  for (auto& a : L.arrays) {
    if (!a.touched) continue;
    Span s = span_of(a, ctx);
    if (!s.empty() && !containing(S, s)) {
      n += (s.hi - s.lo) * (a.written ? 2 : 1);
      if (a.written) out += s.hi - s.lo;
    }
  }
  if (back) *back = out;  // of n: the written arrays' copies back
  return n;
}

// Mirrors for every array the loop touches; rewrites their data pointers in `dctx` (a copy
// of the host context) to the device copies, and marks the written ones dirty.
bool prepare(Session& S, const GpuLoop& L, const int64_t* ctx, int64_t* dctx, uint64_t fresh, std::string* err) {
  struct Want {
    Span s;
    bool whole = false;  // an array the loop overwrites whole, and no gap in its bytes
  };
  std::vector<Want> want;
  for (size_t k = 0; k < L.arrays.size(); k++) {
    const GpuArray& a = L.arrays[k];
    if (!a.touched) continue;
    Want w;
    w.s = span_of(a, ctx);
    if (w.s.empty()) continue;
    if (k < 64 && (fresh >> k & 1) && a.fresh) {
      uint64_t items = 1;
      for (int d = 0; d < a.ndim; d++) items *= (uint64_t)ctx[a.slot + 1 + d];
      w.whole = w.s.hi - w.s.lo == items * (uint64_t)a.itemsize;
    }
    want.push_back(w);
  }
  std::sort(want.begin(), want.end(), [](const Want& a, const Want& b) { return a.s.lo < b.s.lo; });
  // Unions of overlapping spans; one that is a single array's overwritten whole is not copied.
  std::vector<Want> unions;
  for (auto& w : want) {
    if (!unions.empty() && w.s.lo < unions.back().s.hi) {
      unions.back().s.hi = std::max(unions.back().s.hi, w.s.hi);
      unions.back().whole = false;
    } else {
      unions.push_back(w);
    }
  }
  for (auto& [u, whole] : unions) {
    if (containing(S, u)) continue;
    // Overlapping mirrors go first (their writes to the host), then one mirror for u.
    for (size_t i = 0; i < S.mirrors.size();) {
      Mirror& m = S.mirrors[i];
      if (m.lo < u.hi && u.lo < m.hi) {
        if (!copy_back(m, err)) return false;
        pool().put(m.dev, m.hi - m.lo);
        S.mirrors.erase(S.mirrors.begin() + (long)i);
      } else {
        i++;
      }
    }
    Mirror m;
    m.lo = u.lo;
    m.hi = u.hi;
    double t0 = now_s();  // (the copy's time counts getting the device memory too: the cost model's bandwidth)
    if (!pool().get(u.hi - u.lo, &m.dev, err)) return false;
    if (whole) {
      m.unfilled = true;
      // Emulating, the stand-in memory gets a pattern a missed element would show (NaN,
      // -1), not whatever the pool's block held.
      if (emulating()) std::memset((void*)(uintptr_t)m.dev, 0xff, u.hi - u.lo);
      std::lock_guard<std::mutex> g(g_stats_mu);
      g_stats.h2d_skipped_bytes += u.hi - u.lo;
    } else {
      if (!Mem::h2d(m.dev, (const void*)u.lo, u.hi - u.lo, err)) {
        pool().put(m.dev, u.hi - u.lo);
        return false;
      }
      std::lock_guard<std::mutex> g(g_stats_mu);
      g_stats.h2d_bytes += u.hi - u.lo;
      g_stats.h2d_s += now_s() - t0;
    }
    S.mirrors.push_back(m);
  }
  for (auto& a : L.arrays) {
    if (!a.touched) continue;
    Span s = span_of(a, ctx);
    if (s.empty()) continue;
    Mirror* m = const_cast<Mirror*>(containing(S, s));
    if (!m) {
      *err = "internal error: no mirror for an array";
      return false;
    }
    dctx[a.slot] = (int64_t)(m->dev + ((uintptr_t)ctx[a.slot] - m->lo));
    if (a.written) m->dirty = true;
  }
  return true;
}

// Loads M's PTX once (M.mu held, the context current on this thread).
void load_module(GpuModule& M) {
  if (M.load_tried) return;
  M.load_tried = true;
  double t0 = now_s();
  char log[8192];
  log[0] = 0;
  int opts[2] = {5, 6};  // CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
  void* vals[2] = {log, (void*)(uintptr_t)sizeof log};
  CUresult r = driver()->cuModuleLoadDataEx(&M.mod, M.ptx.c_str(), 2, opts, vals);
  M.load_s = now_s() - t0;
  if (r != 0) {
    M.mod = nullptr;
    M.load_error = "loading the PTX failed: " + error_text(r) + " " + std::string(log).substr(0, 300);
  }
}

// The loop's kernel function in its loaded module.
bool ensure_function(GpuLoop& L, std::string* why) {
  std::lock_guard<std::mutex> g(L.mu);
  if (L.fn) return true;
  GpuModule* M = L.module;
  std::lock_guard<std::mutex> gm(M->mu);
  if (M->ptx.empty()) {
    *why = M->error.empty() ? "no PTX for this kernel" : M->error;
    return false;
  }
  const Driver* d = driver();
  load_module(*M);
  if (!M->mod) {
    *why = M->load_error;
    return false;
  }
  CUresult r = d->cuModuleGetFunction(&L.fn, M->mod, L.entry.c_str());
  if (r != 0) {
    *why = "no kernel " + L.entry + " in the module: " + error_text(r);
    L.fn = nullptr;
    return false;
  }
  return true;
}

// Runs [lo, hi) with record index `tid` (1: record nothing but warnings). A loop with
// reductions runs on `threads` threads (a multiple of the block), thread g with record
// tid + g, each striding over the range.
bool launch(GpuLoop& L, cpu::ParallelBody cpu_body, CUdeviceptr dctx, int64_t lo, int64_t hi, int64_t tid,
            std::string* err, int64_t threads = 0) {
  if (hi <= lo) return true;
  if (emulating() && threads > 0) {
    // Contiguous chunks stand in for the strided threads: any split is one the GPU could make.
    const int64_t n = hi - lo;
    for (int64_t g = threads - 1; g >= 0; g--) {
      const int64_t a = lo + n * g / threads, b = lo + n * (g + 1) / threads;
      if (a < b) cpu_body((void*)(uintptr_t)dctx, a, b, tid + g);
    }
    return true;
  }
  if (emulating()) {
    // Last iteration first: nothing may depend on the order of a parallel loop.
    for (int64_t k = hi - 1; k >= lo; k--) cpu_body((void*)(uintptr_t)dctx, k, k + 1, tid);
    return true;
  }
  const int64_t n = hi - lo;
  unsigned gx, gy = 1, block;
  if (threads > 0) {
    block = threads >= 256 ? 256 : (unsigned)threads;
    gx = (unsigned)(threads / block);
  } else if (L.collapsed) {
    // Rows of blocks for this loop, 256 threads (lanes of the inner loop) per block, and
    // enough blocks per row for about a million threads in all (the last iteration, which
    // records the privates, runs alone as one row of lanes).
    block = 256;
    gy = (unsigned)std::min<int64_t>(n, 65535);
    gx = (unsigned)std::max<int64_t>(1, std::min<int64_t>(64, (1 << 20) / (256 * (int64_t)gy)));
  } else if (n == 1 && tid == 0) {
    gx = block = 1;  // the last iteration alone, recording its privates
  } else {
    block = n >= 256 ? 256 : (unsigned)((n + 31) / 32 * 32);
    gx = (unsigned)((n + block - 1) / block);
  }
  void* params[] = {&dctx, &lo, &hi, &tid};
  CUresult r = driver()->cuLaunchKernel(L.fn, gx, gy, 1, block, 1, 1, 0, nullptr, params, nullptr);
  if (r != 0) {
    *err = "cuLaunchKernel: " + error_text(r);
    return false;
  }
  return true;
}

void ran_on_cpu(GpuLoop& L, const std::string& why) {
  std::lock_guard<std::mutex> g(L.mu);
  L.cpu_runs++;
  L.why_cpu = why;
}

}  // namespace

namespace {
std::mutex g_records_mu;
std::vector<std::unique_ptr<GpuModule>> g_modules;
std::vector<std::unique_ptr<GpuLoop>> g_loops;
}  // namespace

GpuModule* new_module() {
  std::lock_guard<std::mutex> g(g_records_mu);
  g_modules.push_back(std::make_unique<GpuModule>());
  return g_modules.back().get();
}

GpuLoop* new_loop() {
  std::lock_guard<std::mutex> g(g_records_mu);
  g_loops.push_back(std::make_unique<GpuLoop>());
  return g_loops.back().get();
}

Target target() {
  int t = g_target.load();
  if (t < 0) {
    t = (int)parse_target();
    g_target.store(t);
  }
  return (Target)t;
}

void set_target(Target t) { g_target.store((int)t); }

bool emulating() {
  static const bool e = env("STAGEPY_GPU_EMULATE") == "1" || env("STAGEPY_GPU_EMULATE") == "alternate";
  return e;
}

// STAGEPY_GPU_EMULATE=alternate: every other run of a loop on its CPU version (gpu_runtime.h).
bool emulating_alternate() {
  static const bool e = env("STAGEPY_GPU_EMULATE") == "alternate";
  return e;
}

bool gpu_wanted(std::string* why) {
  if (target() == Target::Cpu) {
    if (why) *why = "STAGEPY_TARGET=cpu";
    return false;
  }
  if (emulating()) return true;
  return available(why);
}

ModulePreloader::ModulePreloader() {
  const Device* dev = nullptr;
  if (emulating() || !driver(&dev)) return;
  const int cc = dev->cc_major * 10 + dev->cc_minor;
  t_ = std::thread([this, cc] {
    if (!make_current()) return;
    // The driver's first module load in a process starts its PTX compiler: a module of our
    // own does that while LLVM works (once per process; a failure only means no head start).
    static std::once_flag warmed;
    std::call_once(warmed, [cc] {
      if (cc < 60) return;
      const std::string ptx = std::string(cc >= 90 ? ".version 7.8\n.target sm_90\n" : ".version 6.0\n.target sm_60\n") +
                              ".address_size 64\n.visible .entry stagepy_warm_up() { ret; }\n";
      CUmodule mod = nullptr;
      driver()->cuModuleLoadDataEx(&mod, ptx.c_str(), 0, nullptr, nullptr);
    });
    GpuModule* m = nullptr;
    {
      std::unique_lock<std::mutex> g(mu_);
      cv_.wait(g, [this] { return given_; });
      m = m_;
    }
    if (!m || m->ptx.empty()) return;
    std::lock_guard<std::mutex> gm(m->mu);
    load_module(*m);
  });
}

void ModulePreloader::give(GpuModule* m) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (given_) return;
    given_ = true;
    m_ = m;
  }
  cv_.notify_one();
}

ModulePreloader::~ModulePreloader() {
  give(nullptr);
  if (t_.joinable()) t_.join();
}

std::string device_arch() {
  const Device* dev = nullptr;
  if (!driver(&dev)) return "sm_70";
  return "sm_" + std::to_string(dev->cc_major) + std::to_string(dev->cc_minor);
}

std::string end_session() {
  Session& S = t_session;
  for (auto& [loop, n] : S.runs) {
    std::lock_guard<std::mutex> g(loop->mu);
    loop->runs_per_session = n;
  }
  S.runs.clear();
  if (!S.mirrors.empty()) {
    std::string err;
    if (!flush(S, &err) && S.fatal.empty()) S.fatal = err;
  }
  std::string f = std::move(S.fatal);
  S.fatal.clear();
  return f;
}

GpuStats stats() {
  std::lock_guard<std::mutex> g(g_stats_mu);
  return g_stats;
}

}  // namespace stagepy::backends::gpu

using namespace stagepy::backends::gpu;

int32_t stagepy_gpu_for(GpuLoop* L, stagepy::backends::cpu::ParallelBody cpu_body, int64_t* ctx, int64_t* record,
                        int64_t k0, int64_t trip, int64_t threads, uint64_t fresh) {
  Session& S = t_session;
  std::string err;
  auto on_cpu = [&](const std::string& why) {
    ran_on_cpu(*L, why);
    if (!flush(S, &err) && S.fatal.empty()) S.fatal = err;
    return 1;
  };
  const int64_t n = trip - k0;
  if (n <= 0) return on_cpu("no iterations");
  S.runs[L]++;
  if (!S.fatal.empty()) return on_cpu("an earlier GPU failure");
  if (emulating()) {
    // The emulation runs the CPU body, but the PTX must have been built all the same.
    std::lock_guard<std::mutex> g(L->module->mu);
    if (L->module->ptx.empty()) return on_cpu(L->module->error.empty() ? "no PTX" : L->module->error);
  } else {
    if (!available(&err)) return on_cpu(err);
    if (std::string why; !make_current(&why)) return on_cpu(why);
    if (!ensure_function(*L, &err)) return on_cpu(err);
    if (n / 256 >= (int64_t)INT32_MAX) return on_cpu("too many iterations for one launch");
  }
  // The cost model: copies and launches against the CPU's threads, from a static count of
  // the body's operations at first; once the loop has run on both, from what each took per
  // iteration. Work big enough to matter goes to the GPU once, to be measured there.
  {
    const double work = (double)n * L->ops_per_iter;
    size_t back_bytes = 0;
    const double bytes = (double)bytes_to_move(S, *L, ctx, &back_bytes);
    // Copying what is not on the device yet there, and what the loop writes back at the end.
    const double copies_s = (bytes - (double)back_bytes) / h2d_bandwidth() + (double)back_bytes / d2h_bandwidth();
    const double est_gpu = 2 * 10e-6 + bytes / 10e9 + work / 1e12;
    const double est_cpu = work / ((double)std::max<int64_t>(threads, 1) * 1e9);
    double gpu_iter, cpu_iter;
    int reuse;
    {
      std::lock_guard<std::mutex> g(L->mu);
      L->est_gpu_s = est_gpu;
      L->est_cpu_s = est_cpu;
      gpu_iter = L->gpu_iter_s;
      cpu_iter = L->cpu_iter_s;
      reuse = std::max(1, L->runs_per_session);
    }
    if (target() == Target::Cpu) return on_cpu("STAGEPY_TARGET=cpu");
    // A run on the CPU that the cost model learns from: timed until stagepy_gpu_cpu_done.
    auto timed_on_cpu = [&](const std::string& why) {
      const int answer = on_cpu(why);
      S.cpu_loop = L;
      S.cpu_t0 = now_s();
      S.cpu_n = n;
      return answer;
    };
    static std::atomic<uint64_t> alternate_runs{0};  // (every loop's runs, in turn)
    if (target() == Target::Auto && emulating_alternate() && alternate_runs++ % 2 == 1)
      return timed_on_cpu("emulation: every other run on the CPU (STAGEPY_GPU_EMULATE=alternate)");
    if (target() == Target::Auto && !emulating()) {
      bool gpu;
      std::string why = "the cost model expects the CPU to be faster";
      if (gpu_iter > 0 && cpu_iter > 0) {
        // Measured on both: the device's run plus copying there what is not there yet
        // (shared by the runs of a time loop that reuse that copy: as many as last time),
        // against the threads' run plus copying back what the device wrote.
        const double gpu_cost = gpu_iter * (double)n + copies_s / (double)reuse;
        const double cpu_cost = cpu_iter * (double)n + (double)dirty_bytes(S) / d2h_bandwidth();
        gpu = gpu_cost < cpu_cost;
        why = "measured faster on the CPU";
      } else if (gpu_iter == 0) {
        gpu = est_cpu >= 50e-6 || est_gpu < est_cpu;
      } else {
        // Measured on the GPU only: the CPU once, to be measured too (the static estimate of
        // the CPU's time is often far off: memory-bound loops run much faster than it says).
        gpu = false;
        why = "run once on the CPU to measure it there too";
      }
      if (!gpu) return timed_on_cpu(why);
    }
  }
  const double t0 = now_s();
  std::vector<int64_t> dctx(ctx, ctx + L->ctx_size);
  if (!prepare(S, *L, ctx, dctx.data(), fresh, &err)) return on_cpu("device memory: " + err);
  const double t_copied = now_s();  // the arrays are on the device
  // The context and the records: record 0 for the last iteration; then, for a loop with
  // reductions one per GPU thread, else one that the other iterations share (warnings).
  const bool red = L->reductions > 0;
  const int64_t n_rest = (L->privates > 0 ? trip - 1 : trip) - k0;
  int64_t red_threads = 0;
  if (red && n_rest > 0) {
    red_threads = emulating() ? std::min<int64_t>(n_rest, 4) : std::min<int64_t>(n_rest, 32768);
    if (!emulating()) {
      const int64_t block = red_threads >= 256 ? 256 : (red_threads + 31) / 32 * 32;
      red_threads = (red_threads + block - 1) / block * block;
    }
  }
  const size_t nrec = red ? 1 + (size_t)red_threads : 2;
  const size_t rec_bytes = (size_t)L->record_size * 8;
  const size_t bytes = (size_t)L->ctx_size * 8 + nrec * rec_bytes;
  CUdeviceptr dbuf = 0;
  if (!pool().get(bytes, &dbuf, &err)) return on_cpu("device memory: " + err);
  struct Give {
    CUdeviceptr p;
    size_t n;
    ~Give() { pool().put(p, n); }
  } give{dbuf, bytes};
  const CUdeviceptr drec = dbuf + (size_t)L->ctx_size * 8;
  dctx[(size_t)L->results_slot] = (int64_t)drec;
  std::vector<int64_t> host_rec(nrec * (size_t)L->record_size);
  for (size_t r = 0; r < nrec; r++) std::copy(record, record + L->record_size, host_rec.begin() + r * L->record_size);
  if (!Mem::h2d(dbuf, dctx.data(), (size_t)L->ctx_size * 8, &err) ||
      !Mem::h2d(drec, host_rec.data(), nrec * rec_bytes, &err))
    return on_cpu(err);
  S.record_count = 0;
  int64_t launches = 0;
  const double t_launch = now_s();
  auto fail = [&](const std::string& e) {
    // The kernel goes on (its results are discarded: the dispatcher raises), reading
    // records that must exist.
    S.fatal = "GPU failure in the loop at line " + std::to_string(L->line) + ": " + e;
    S.records.assign(record, record + L->record_size);
    S.record_count = 1;
    return 0;
  };
  if (L->privates > 0) {
    // The last iteration alone, recording its privates.
    if (!launch(*L, cpu_body, dbuf, trip - 1, trip, 0, &err)) {
      if (launches == 0 && !emulating()) return on_cpu(err);  // nothing ran yet
      return fail(err);
    }
    launches++;
    if (!Mem::d2h(record, drec, rec_bytes, &err)) return fail(err);
    for (int p = 0; p < L->privates; p++)
      if (record[L->last + 3 * p] < 0) {
        // Not assigned by the last iteration: the host runs the others, in order.
        for (auto& m : S.mirrors)
          if (m.unfilled)  // (codegen makes none where this can happen: GpuArray::fresh)
            return fail("internal error: an array overwritten whole went back to the host unfinished");
        ran_on_cpu(*L, "a private scalar was not assigned in the last iteration");
        {
          std::lock_guard<std::mutex> g(L->mu);
          L->launches += 1;
        }
        if (!flush(S, &err)) return fail(err);
        if (red) {
          S.records.assign(record, record + L->record_size);
          S.record_count = 1;
        }
        return 2;
      }
    trip -= 1;
  }
  if (!launch(*L, cpu_body, dbuf, k0, trip, 1, &err, red_threads)) {
    if (launches == 0) return on_cpu(err);
    return fail(err);
  }
  launches++;
  if (!emulating()) {
    CUresult r = driver()->cuCtxSynchronize();
    if (r != 0) return fail("the kernel failed: " + error_text(r));
  }
  const double t_synced = now_s();
  for (auto& m : S.mirrors) m.unfilled = false;  // every element written
  if (!Mem::d2h(host_rec.data(), drec, nrec * rec_bytes, &err)) return fail(err);
  if (red) {
    S.records = std::move(host_rec);
    S.record_count = (int64_t)nrec;
  } else {
    // Warnings: the first iteration of each, over both records.
    for (int w = 0; w < L->warn_slots; w++) {
      size_t at = (size_t)(L->warn + w);
      host_rec[at] = std::min(host_rec[at], host_rec[(size_t)L->record_size + at]);
    }
    std::copy(host_rec.begin(), host_rec.begin() + L->record_size, record);
  }
  {
    std::lock_guard<std::mutex> g(L->mu);
    const double t_end = now_s();
    L->launches += (unsigned long long)launches;
    L->gpu_s += t_end - t0;
    L->gpu_iter_s = (t_end - t_copied) / (double)n;
  }
  {
    std::lock_guard<std::mutex> g(g_stats_mu);
    g_stats.launches += (unsigned long long)launches;
    g_stats.kernel_s += t_synced - t_launch;
  }
  return 0;
}

int64_t* stagepy_gpu_records(GpuLoop*, int64_t* count) {
  Session& S = t_session;
  *count = S.record_count;
  return S.records.data();
}

void stagepy_gpu_cpu_done(GpuLoop* L) {
  Session& S = t_session;
  if (S.cpu_loop != L || S.cpu_n <= 0) return;
  const double dt = now_s() - S.cpu_t0;
  S.cpu_loop = nullptr;
  std::lock_guard<std::mutex> g(L->mu);
  L->cpu_iter_s = dt / (double)S.cpu_n;
}

void stagepy_gpu_flush() {
  Session& S = t_session;
  if (S.mirrors.empty()) return;
  std::string err;
  if (!flush(S, &err) && S.fatal.empty()) S.fatal = err;
}
