// See scratch.h.
#include "backends/cpu/scratch.h"

#include <cstdlib>
#include <memory>
#include <vector>

namespace stagepy::backends::cpu {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

struct Buffer {
  std::unique_ptr<void, FreeDeleter> data;
  int64_t size = 0;
};

thread_local std::vector<Buffer> buffers;

}  // namespace

void release_scratch(int64_t keep_bytes) {
  for (auto& b : buffers)
    if (b.size > keep_bytes) b = Buffer{};
}

int64_t scratch_bytes() {
  int64_t n = 0;
  for (auto& b : buffers) n += b.size;
  return n;
}

}  // namespace stagepy::backends::cpu

extern "C" void* stagepy_scratch(int64_t slot, int64_t bytes) {
  using stagepy::backends::cpu::Buffer;
  auto& bufs = stagepy::backends::cpu::buffers;
  if (slot < 0 || bytes < 0) return nullptr;
  if ((size_t)slot >= bufs.size()) bufs.resize((size_t)slot + 1);
  Buffer& b = bufs[(size_t)slot];
  if (b.size >= bytes && b.data) return b.data.get();
  const int64_t want = bytes < 64 ? 64 : (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, (size_t)want);
  if (!p) return nullptr;
  b.data.reset(p);
  b.size = want;
  return p;
}
