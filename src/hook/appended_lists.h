// appended_lists: the Python side of the lists a kernel call appends to and makes
// (Type::Appended, backends/cpu/append_buffer.h). In: the list objects the nest only
// appends to, each given one buffer (whichever variables hold it), and the arena in which
// the kernel makes new lists; after the kernel returns, their collected items. Out: the
// items appended to each list object in the order they came, boxed as CPython would have
// made them, and a list object for each new list an item or a variable names (one object
// per buffer, made once, so that `rows.append(row)` and `row` are the same list).
#pragma once
#include <Python.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cpu/append_buffer.h"
#include "hook/py_ref.h"

namespace stagepy::runtime {

class AppendedLists {
 public:
  // Boxes a number from its type tag (1-based, the typed nest's) and bits; a new reference,
  // or nullptr with an exception set.
  using BoxNumber = std::function<PyObject*(uint64_t tag, uint64_t bits)>;
  // The list object of a list the kernel made and reads (its MadeList's address; Type::made):
  // a new reference, or nullptr with an exception set.
  using MadeObject = std::function<PyObject*(uint64_t header)>;

  // The buffer collecting the items for `list` (a list object the caller holds until
  // finish()), made on first sight.
  backends::cpu::AppendBuffer* buffer_for(PyObject* list);
  backends::cpu::ListArena* arena() { return &arena_; }
  bool empty() const { return entry_.empty() && arena_.made.empty(); }

  // After the kernel: each list object gets its items, in order. -1 with an exception set
  // on failure (MemoryError where the kernel could not keep an item).
  int finish(const BoxNumber& box, const MadeObject& made);
  // The list object of the buffer at `address` (the kernel's value of an Appended
  // variable): a new reference, or nullptr with an exception set. After finish().
  PyObject* object_of(uint64_t address);

 private:
  // The list object of a buffer (a new reference): an entry list's, or a new list, empty
  // until drain() fills it (iteratively: a chain of lists `node = [x, node]` may be deep).
  PyObject* list_of(const backends::cpu::AppendBuffer* b);
  int fill(PyObject* list, const backends::cpu::AppendBuffer& buf);
  int drain();

  std::vector<std::pair<PyObject*, std::unique_ptr<backends::cpu::AppendBuffer>>> entry_;
  std::unordered_map<PyObject*, backends::cpu::AppendBuffer*> by_object_;
  std::unordered_map<const backends::cpu::AppendBuffer*, PyObject*> entry_object_;
  backends::cpu::ListArena arena_;
  std::unordered_map<const backends::cpu::AppendBuffer*, PyRef> made_;
  std::unordered_map<const backends::cpu::AppendBuffer*, bool> in_arena_;
  std::vector<const backends::cpu::AppendBuffer*> pending_;  // made, not yet filled
  const BoxNumber* box_ = nullptr;
  const MadeObject* made_object_ = nullptr;
};

}  // namespace stagepy::runtime
