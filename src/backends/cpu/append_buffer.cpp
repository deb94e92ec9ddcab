// See append_buffer.h.
#include "backends/cpu/append_buffer.h"

#include <cstddef>
#include <initializer_list>
#include <new>

using stagepy::backends::cpu::AppendBuffer;
using stagepy::backends::cpu::ListArena;

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

thread_local ListArena* current_arena = nullptr;
}  // namespace

ListArena::Scope::Scope(ListArena* arena) : previous_(current_arena) { current_arena = arena; }
ListArena::Scope::~Scope() { current_arena = previous_; }

extern "C" void* stagepy_list_new() {
  ListArena* a = current_arena;
  if (!a) {  // a kernel called with no arena (the dispatcher always gives one): keeps nothing
    static thread_local AppendBuffer nowhere;
    nowhere.out_of_memory = true;
    return &nowhere;
  }
  try {
    return &a->made.emplace_back();
  } catch (const std::bad_alloc&) {
    a->failed.out_of_memory = true;
    return &a->failed;
  }
}

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
