// See made_lists.h.
#include "backends/cpu/made_lists.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace stagepy::backends::cpu {
namespace {
thread_local MadeLists* current = nullptr;
constexpr int64_t kMaxItems = int64_t(1) << 40;  // beyond: CPython's MemoryError (or its list)
}  // namespace

MadeLists::Scope::Scope(MadeLists* lists) : previous_(current) { current = lists; }
MadeLists::Scope::~Scope() { current = previous_; }

void MadeLists::Free::operator()(MadeList* m) const { std::free(m); }
void MadeLists::Free::operator()(char* p) const { std::free(p); }

MadeList* MadeLists::wrap(void* data, int64_t len, int64_t source, int64_t kind) {
  try {
    wrapped_.push_back(std::make_unique<MadeList>());
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  MadeList* m = wrapped_.back().get();
  m->len = len;
  m->data = static_cast<char*>(data);
  m->source = source;
  m->kind = kind;
  return m;
}

MadeList* MadeLists::make(int64_t len, int64_t item_bytes, int64_t kind, const int64_t* live, int64_t nlive) {
  if (len < 0 || len > kMaxItems || item_bytes <= 0 || item_bytes > 16) return nullptr;
  const int64_t bytes = len * item_bytes;
  // A list no variable holds is garbage (lists live in variables only: type_infer lets a
  // statement make one list, which it assigns): its memory serves again.
  auto held = [&](const MadeList* m) {
    for (int64_t k = 0; k < nlive; k++)
      if (live[k] == (int64_t)(intptr_t)m) return true;
    return false;
  };
  std::unique_ptr<MadeList, Free>* spare = nullptr;
  for (auto& m : made_) {
    if (m->pinned || held(m.get())) continue;
    if (m->bytes >= bytes) {
      m->len = len;
      m->kind = kind;
      return m.get();
    }
    spare = &m;
  }
  const size_t block = sizeof(MadeList) + 64 + (size_t)bytes;
  void* p = std::malloc(block);
  if (!p) return nullptr;
  auto* m = new (p) MadeList;
  m->len = len;
  m->source = -1;
  m->bytes = bytes;
  m->kind = kind;
  // (Items 64-byte aligned after the header.)
  const uintptr_t items = ((uintptr_t)p + sizeof(MadeList) + 63) & ~(uintptr_t)63;
  m->data = reinterpret_cast<char*>(items);
  if (spare) {
    spare->reset(m);
    return m;
  }
  try {
    made_.emplace_back(m);
  } catch (const std::bad_alloc&) {
    std::free(p);
    return nullptr;
  }
  return m;
}

void* MadeLists::grow(MadeList* m, int64_t item_bytes) {
  if (!m || item_bytes <= 0 || item_bytes > 16 || m->len < 0 || m->len >= kMaxItems) return nullptr;
  const int64_t need = (m->len + 1) * item_bytes;
  if (need > m->bytes) {
    // Twice what it needs (as CPython's lists over-allocate, in proportion), 64-byte aligned.
    const int64_t bytes = std::max<int64_t>(2 * need, 256);
    char* block = static_cast<char*>(std::malloc((size_t)bytes + 64));
    if (!block) return nullptr;
    try {
      grown_.emplace_back(block);
    } catch (const std::bad_alloc&) {
      std::free(block);
      return nullptr;
    }
    char* items = reinterpret_cast<char*>(((uintptr_t)block + 63) & ~(uintptr_t)63);
    if (m->len > 0) std::memcpy(items, m->data, (size_t)(m->len * item_bytes));
    m->data = items;
    m->bytes = bytes;
  }
  void* slot = m->data + m->len * item_bytes;
  m->len++;
  return slot;
}

}  // namespace stagepy::backends::cpu

extern "C" void* stagepy_list_wrap(void* data, int64_t len, int64_t source, int64_t kind) {
  stagepy::backends::cpu::MadeLists* lists = stagepy::backends::cpu::current;
  return lists ? lists->wrap(data, len, source, kind) : nullptr;
}

extern "C" void* stagepy_list_make(int64_t len, int64_t item_bytes, int64_t kind, const int64_t* live, int64_t nlive) {
  stagepy::backends::cpu::MadeLists* lists = stagepy::backends::cpu::current;
  return lists ? lists->make(len, item_bytes, kind, live, nlive) : nullptr;
}

extern "C" void* stagepy_list_grow(void* header, int64_t item_bytes) {
  stagepy::backends::cpu::MadeLists* lists = stagepy::backends::cpu::current;
  return lists ? lists->grow(static_cast<stagepy::MadeList*>(header), item_bytes) : nullptr;
}
