// See append_buffer.h.
#include "backends/cpu/append_buffer.h"

#include <new>

using stagepy::backends::cpu::AppendBuffer;

extern "C" void stagepy_list_append(void* buffer, int64_t tag, int64_t bits) {
  auto* b = static_cast<AppendBuffer*>(buffer);
  b->count++;
  if (b->out_of_memory) return;
  try {
    b->words.push_back((uint64_t)tag);
    b->words.push_back((uint64_t)bits);
  } catch (const std::bad_alloc&) {  // kernels do not unwind
    b->out_of_memory = true;
  }
}

extern "C" void stagepy_list_append_tuple(void* buffer, int64_t n, const int64_t* pairs) {
  auto* b = static_cast<AppendBuffer*>(buffer);
  b->count++;
  if (b->out_of_memory) return;
  try {
    b->words.push_back(AppendBuffer::kTupleItem | (uint64_t)n);
    b->words.insert(b->words.end(), pairs, pairs + 2 * n);
  } catch (const std::bad_alloc&) {
    b->out_of_memory = true;
  }
}

extern "C" int64_t stagepy_list_len(void* buffer) {
  auto* b = static_cast<AppendBuffer*>(buffer);
  return b->base_len + b->count;
}
