// See append_buffer.h.
#include "backends/cpu/append_buffer.h"

#include <cstddef>
#include <initializer_list>
#include <new>

using stagepy::backends::cpu::AppendBuffer;

namespace {
// One more item, of these words. Kernels do not unwind: a failed allocation is recorded.
void keep(AppendBuffer* b, std::initializer_list<uint64_t> head, const int64_t* rest = nullptr, size_t n_rest = 0) {
  b->count++;
  if (b->out_of_memory) return;
  try {
    b->words.insert(b->words.end(), head);
    if (n_rest) b->words.insert(b->words.end(), rest, rest + n_rest);
  } catch (const std::bad_alloc&) {
    b->out_of_memory = true;
  }
}
}  // namespace

extern "C" void stagepy_list_append(void* buffer, int64_t tag, int64_t bits) {
  keep(static_cast<AppendBuffer*>(buffer), {(uint64_t)tag, (uint64_t)bits});
}

extern "C" void stagepy_list_append_tuple(void* buffer, int64_t n, const int64_t* pairs) {
  keep(static_cast<AppendBuffer*>(buffer), {AppendBuffer::kTupleItem | (uint64_t)n}, pairs, 2 * (size_t)n);
}

extern "C" int64_t stagepy_list_len(void* buffer) {
  auto* b = static_cast<AppendBuffer*>(buffer);
  return b->base_len + b->count;
}
