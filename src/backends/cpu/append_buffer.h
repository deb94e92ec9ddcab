// append_buffer: the items kernels append to Python lists (`out.append(x)` where the nest
// only appends to `out`, Type::Appended). In, from kernel code: stagepy_list_append(buffer,
// tag, bits) for each append, in the order the statements run; out, for the dispatcher: the
// (type tag, value bits) pairs in that order, which it boxes (the typed nest's tags) and
// appends to the list object once the kernel returns.
#pragma once
#include <cstdint>
#include <vector>

namespace stagepy::backends::cpu {

struct AppendBuffer {
  int64_t base_len = 0;         // the list's length at entry
  std::vector<uint64_t> items;  // tag, bits, tag, bits, ...
  bool out_of_memory = false;   // an append could not be kept (the dispatcher raises MemoryError)
};

}  // namespace stagepy::backends::cpu

extern "C" void stagepy_list_append(void* buffer, int64_t tag, int64_t bits);
// len() of the list: its length at entry plus the items appended since.
extern "C" int64_t stagepy_list_len(void* buffer);
