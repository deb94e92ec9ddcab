// append_buffer: the items kernels append to Python lists (`out.append(x)` where the nest
// only appends to `out`, Type::Appended), and the lists they make (`row = []`). In, from
// kernel code: stagepy_list_new() for a new list (a buffer of the current ListArena),
// stagepy_list_append(buffer, tag, bits) for a number or a list (kListItem and its
// buffer's address), stagepy_list_append_tuple(buffer, n, pairs) for a tuple of n numbers,
// in the order the statements run; out, for the dispatcher: each buffer's items in that
// order as words (a number: its type tag, then its bits; a list: kListItem, then its
// buffer's address; a list made and read (Type::made): kMadeItem, then its header's
// address; a tuple: kTupleItem | n, then n (tag, bits) pairs), which it boxes (the
// typed nest's tags) and appends to the list object, or makes a new list of, once the
// kernel returns.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

namespace stagepy::backends::cpu {

struct AppendBuffer {
  static constexpr uint64_t kTupleItem = 1ULL << 32;  // (type tags are far below)
  static constexpr uint64_t kListItem = 1ULL << 33;
  static constexpr uint64_t kMadeItem = 1ULL << 34;  // then a MadeList's address (made_lists.h)
  int64_t base_len = 0;         // the list's length at entry
  int64_t count = 0;            // items appended
  std::vector<uint64_t> words;
  bool out_of_memory = false;   // an append could not be kept (the dispatcher raises MemoryError)
};

// The buffers of the lists one kernel call makes. Kernels make lists only in loops that run
// in order, on the thread that called them (plan_parallel; never on the GPU), which the
// dispatcher gives its arena for the call (ListArena::Scope).
struct ListArena {
  std::deque<AppendBuffer> made;
  AppendBuffer failed;  // given where no buffer could be made (out_of_memory set)
  bool out_of_memory() const { return failed.out_of_memory; }

  class Scope {
   public:
    explicit Scope(ListArena* arena);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ListArena* previous_;
  };
};

}  // namespace stagepy::backends::cpu

extern "C" void* stagepy_list_new();
extern "C" void stagepy_list_append(void* buffer, int64_t tag, int64_t bits);
extern "C" void stagepy_list_append_tuple(void* buffer, int64_t n, const int64_t* pairs);
// len() of the list: its length at entry plus the items appended since.
extern "C" int64_t stagepy_list_len(void* buffer);
