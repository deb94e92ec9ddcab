// See append_buffer.h.
#include "backends/cpu/append_buffer.h"

#include <new>

extern "C" void stagepy_list_append(void* buffer, int64_t tag, int64_t bits) {
  auto* b = static_cast<stagepy::backends::cpu::AppendBuffer*>(buffer);
  if (b->out_of_memory) return;
  try {
    b->items.push_back((uint64_t)tag);
    b->items.push_back((uint64_t)bits);
  } catch (const std::bad_alloc&) {  // kernels do not unwind
    b->out_of_memory = true;
  }
}

extern "C" int64_t stagepy_list_len(void* buffer) {
  auto* b = static_cast<stagepy::backends::cpu::AppendBuffer*>(buffer);
  return b->base_len + (int64_t)(b->items.size() / 2) + (b->out_of_memory ? 1 : 0);
}
