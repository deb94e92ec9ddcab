// See undo_log.h.
#include "backends/cpu/undo_log.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace {
using stagepy::backends::cpu::kUndoMaxBytes;
using stagepy::backends::cpu::kUndoSizeShift;
using stagepy::backends::cpu::kUndoSlots;

constexpr int64_t kEntryBytes = 16;
constexpr int64_t kFirstBytes = int64_t(64) << 10;

int64_t* slots_of(int64_t* records, int64_t r, int64_t size) { return records + r * size; }

// Buffers of finished runs, for the next ones (a fresh buffer's pages fault in on first
// use, which costs as much as a memory-bound loop's iterations): at most kKeptBytes.
constexpr int64_t kKeptBytes = int64_t(64) << 20;
struct Pool {
  std::mutex mutex;
  std::vector<std::pair<char*, int64_t>> free;  // (buffer, capacity)
  int64_t bytes = 0;
};
Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: kernels may run during exit
  return *p;
}

void release(int64_t* slots) {
  char* base = reinterpret_cast<char*>(slots[2]);
  const int64_t cap = slots[1] - slots[2];
  slots[0] = slots[1] = slots[2] = 0;
  if (!base) return;
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.bytes + cap <= kKeptBytes) {
      p.free.emplace_back(base, cap);
      p.bytes += cap;
      return;
    }
  }
  std::free(base);
}

// A kept buffer, the largest, or none.
std::pair<char*, int64_t> reuse() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.free.empty()) return {nullptr, 0};
  size_t best = 0;
  for (size_t k = 1; k < p.free.size(); k++)
    if (p.free[k].second > p.free[best].second) best = k;
  const auto b = p.free[best];
  p.free[best] = p.free.back();
  p.free.pop_back();
  p.bytes -= b.second;
  return b;
}
}  // namespace

extern "C" int32_t stagepy_undo_grow(int64_t* slots) {
  char* base = reinterpret_cast<char*>(slots[2]);
  if (!base) {
    const auto [kept, cap] = reuse();
    if (kept) {
      slots[0] = slots[2] = reinterpret_cast<int64_t>(kept);
      slots[1] = slots[2] + cap;
      return 1;
    }
  }
  const int64_t used = base ? slots[0] - slots[2] : 0;
  const int64_t cap = base ? slots[1] - slots[2] : 0;
  const int64_t want = cap ? 2 * cap : kFirstBytes;
  if (want > kUndoMaxBytes) return 0;
  char* grown = static_cast<char*>(std::realloc(base, (size_t)want));
  if (!grown) return 0;
  slots[2] = reinterpret_cast<int64_t>(grown);
  slots[0] = slots[2] + used;
  slots[1] = slots[2] + want;
  return 1;
}

extern "C" void stagepy_undo_commit(int64_t* records, int64_t* backup, int64_t n, int64_t size) {
  for (int64_t r = 0; r < n; r++) {
    int64_t* s = slots_of(records, r, size);
    s[0] = s[2];
    std::memcpy(backup + r * size + kUndoSlots, s + kUndoSlots, (size_t)(size - kUndoSlots) * sizeof(int64_t));
  }
}

// Every entry of the record's log undone, last first.
static void undo_entries(const int64_t* s) {
  if (!s[2]) return;
  const int64_t* first = reinterpret_cast<const int64_t*>(s[2]);
  for (const int64_t* e = reinterpret_cast<const int64_t*>(s[0]); e > first;) {
    e -= kEntryBytes / (int64_t)sizeof(int64_t);
    const uint64_t tagged = (uint64_t)e[0];
    void* addr = reinterpret_cast<void*>(tagged & ((uint64_t(1) << kUndoSizeShift) - 1));
    const size_t width = size_t(1) << ((tagged >> kUndoSizeShift) & 3);
    const uint64_t old = (uint64_t)e[1];
    std::memcpy(addr, &old, width);  // little-endian: the low bytes are the element's
  }
}

extern "C" void stagepy_undo_abort(int64_t* records, const int64_t* backup, int64_t n, int64_t size) {
  for (int64_t r = 0; r < n; r++) {
    int64_t* s = slots_of(records, r, size);
    undo_entries(s);
    release(s);
    std::memcpy(s + kUndoSlots, backup + r * size + kUndoSlots, (size_t)(size - kUndoSlots) * sizeof(int64_t));
  }
}

extern "C" void stagepy_undo_free(int64_t* records, int64_t n, int64_t size) {
  for (int64_t r = 0; r < n; r++) release(slots_of(records, r, size));
}

extern "C" void stagepy_undo_statement(int64_t* slots, int32_t status) {
  if (status != 0) undo_entries(slots);
  release(slots);
}
