// See appended_lists.h.
#include "hook/appended_lists.h"

namespace stagepy::runtime {

using backends::cpu::AppendBuffer;

AppendBuffer* AppendedLists::buffer_for(PyObject* list) {
  AppendBuffer*& b = by_object_[list];
  if (!b) {
    entry_.emplace_back(list, std::make_unique<AppendBuffer>());
    b = entry_.back().second.get();
    b->base_len = (int64_t)PyList_GET_SIZE(list);
    entry_object_[b] = list;
  }
  return b;
}

int AppendedLists::finish(const BoxNumber& box, const MadeObject& made) {
  box_ = &box;
  made_object_ = &made;
  if (arena_.out_of_memory()) {
    PyErr_NoMemory();
    return -1;
  }
  for (const AppendBuffer& b : arena_.made) in_arena_[&b] = true;
  for (auto& [obj, buf] : entry_)
    if (fill(obj, *buf) < 0) return -1;
  return drain();
}

PyObject* AppendedLists::object_of(uint64_t address) {
  PyRef list = PyRef::steal(list_of(reinterpret_cast<const AppendBuffer*>((uintptr_t)address)));
  if (!list || drain() < 0) return nullptr;
  return list.release();
}

PyObject* AppendedLists::list_of(const AppendBuffer* b) {
  auto e = entry_object_.find(b);
  if (e != entry_object_.end()) return PyRef::borrow(e->second).release();
  auto m = made_.find(b);
  if (m != made_.end()) return PyRef(m->second).release();
  if (!in_arena_.count(b)) {
    PyErr_SetString(PyExc_SystemError, "stagepy: a list the kernel did not make");
    return nullptr;
  }
  PyRef list = PyRef::steal(PyList_New(0));
  if (!list) return nullptr;
  made_[b] = list;
  pending_.push_back(b);
  return list.release();
}

int AppendedLists::drain() {
  while (!pending_.empty()) {
    const AppendBuffer* b = pending_.back();
    pending_.pop_back();
    if (fill(made_.at(b).get(), *b) < 0) return -1;
  }
  return 0;
}

int AppendedLists::fill(PyObject* list, const AppendBuffer& buf) {
  if (buf.out_of_memory) {
    PyErr_NoMemory();
    return -1;
  }
  const std::vector<uint64_t>& w = buf.words;
  for (size_t k = 0; k < w.size();) {
    PyRef item;
    if (w[k] == AppendBuffer::kListItem) {
      item = PyRef::steal(list_of(reinterpret_cast<const AppendBuffer*>((uintptr_t)w[k + 1])));
      k += 2;
    } else if (w[k] == AppendBuffer::kMadeItem) {
      item = PyRef::steal((*made_object_)(w[k + 1]));
      k += 2;
    } else if (w[k] & AppendBuffer::kTupleItem) {
      const size_t n = (size_t)(w[k] & 0xffffffffu);
      item = PyRef::steal(PyTuple_New((Py_ssize_t)n));
      if (!item) return -1;
      for (size_t j = 0; j < n; j++) {
        PyObject* x = (*box_)(w[k + 1 + 2 * j], w[k + 2 + 2 * j]);
        if (!x) return -1;
        PyTuple_SET_ITEM(item.get(), (Py_ssize_t)j, x);
      }
      k += 1 + 2 * n;
    } else {
      item = PyRef::steal((*box_)(w[k], w[k + 1]));
      k += 2;
    }
    if (!item || PyList_Append(list, item.get()) < 0) return -1;
  }
  return 0;
}

}  // namespace stagepy::runtime
