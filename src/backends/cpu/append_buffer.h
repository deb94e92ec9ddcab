// append_buffer: the items kernels append to Python lists (`out.append(x)` where the nest
// only appends to `out`, Type::Appended). In, from kernel code: stagepy_list_append(buffer,
// tag, bits) for a number, stagepy_list_append_tuple(buffer, n, pairs) for a tuple of n
// numbers, in the order the statements run; out, for the dispatcher: the items in that order
// as words (a number: its type tag, then its bits; a tuple: kTupleItem | n, then n such
// pairs), which it boxes (the typed nest's tags) and appends to the list object once the
// kernel returns.
#pragma once
#include <cstdint>
#include <vector>

namespace stagepy::backends::cpu {

struct AppendBuffer {
  static constexpr uint64_t kTupleItem = 1ULL << 32;  // (type tags are far below)
  int64_t base_len = 0;         // the list's length at entry
  int64_t count = 0;            // items appended
  std::vector<uint64_t> words;
  bool out_of_memory = false;   // an append could not be kept (the dispatcher raises MemoryError)
};

}  // namespace stagepy::backends::cpu

extern "C" void stagepy_list_append(void* buffer, int64_t tag, int64_t bits);
extern "C" void stagepy_list_append_tuple(void* buffer, int64_t n, const int64_t* pairs);
// len() of the list: its length at entry plus the items appended since.
extern "C" int64_t stagepy_list_len(void* buffer);
