// made_lists: the memory of the lists kernels make (`cur = [0] * (m + 1)`, `new = best[:]`,
// `d = [1, 2, 3]`; Type::made). In, from kernel code: stagepy_list_wrap(data, len, id, kind) for a
// list read at entry that such a variable holds (a header pointing at the list's buffer),
// and stagepy_list_make(len, item_bytes, kind, live, n) for a new list's memory, given the
// values of every variable that may hold one (`live`: any made list none of them holds is
// garbage, and its memory is reused, unless a list it was appended to holds it (`pinned`):
// a loop making a row per iteration keeps two), and stagepy_list_grow(header, item_bytes)
// for the place of an item appended to a list (`L.append(x)`, Var::resized), which moves
// the items into a larger block of their own where they do not fit (a list read at entry
// moves on its first append: its header then no longer points at the entry buffer). Out,
// for the dispatcher: the headers (kernel_abi.h: MadeList) the variables hold when the
// kernel returns, valid until the MadeLists of the call goes.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "backends/kernel_abi.h"

namespace stagepy::backends::cpu {

// The lists of one kernel call. Kernels make lists only in loops that run in order, on the
// thread that called them (plan_parallel; never on the GPU), which the dispatcher gives
// its MadeLists for the call (MadeLists::Scope).
class MadeLists {
 public:
  MadeLists() = default;
  MadeLists(const MadeLists&) = delete;
  MadeLists& operator=(const MadeLists&) = delete;

  MadeList* wrap(void* data, int64_t len, int64_t source, int64_t kind);
  // nullptr where the memory cannot be had (the kernel hands the statement to CPython).
  MadeList* make(int64_t len, int64_t item_bytes, int64_t kind, const int64_t* live, int64_t nlive);
  // The place of one more item of `item_bytes` at the end of `m`'s items (its length counts
  // it already), or nullptr where the memory cannot be had (`m` unchanged).
  void* grow(MadeList* m, int64_t item_bytes);
  // The headers of the lists read at entry (made_lists.h: wrap), in the order wrapped.
  const std::vector<std::unique_ptr<MadeList>>& wrapped() const { return wrapped_; }

  class Scope {
   public:
    explicit Scope(MadeLists* lists);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    MadeLists* previous_;
  };

 private:
  struct Free {
    void operator()(MadeList* m) const;
    void operator()(char* p) const;
  };
  std::vector<std::unique_ptr<MadeList, Free>> made_;     // header and items in one block
  std::vector<std::unique_ptr<MadeList>> wrapped_;
  std::vector<std::unique_ptr<char, Free>> grown_;  // blocks the items of lists that grew moved to
};

}  // namespace stagepy::backends::cpu

extern "C" void* stagepy_list_wrap(void* data, int64_t len, int64_t source, int64_t kind);
extern "C" void* stagepy_list_make(int64_t len, int64_t item_bytes, int64_t kind, const int64_t* live, int64_t nlive);
extern "C" void* stagepy_list_grow(void* header, int64_t item_bytes);
