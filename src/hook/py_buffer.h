// Objects with the buffer protocol as kernel data: in, an array.array, bytearray, bytes or
// one-dimensional memoryview; out, its memory (held until the kernel is done) and the
// DType of its items. The kernel works in that memory directly; items read as the Python
// ints, floats or bools that indexing the object gives. Other exporters, formats that do
// not name one native item (structs, 'Q' beyond int64, byte order marks) give a reason.
#pragma once
#include <Python.h>

#include <string>

#include "ir/types.h"

namespace stagepy::runtime {

class HeldBuffer {
 public:
  HeldBuffer() = default;
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;
  ~HeldBuffer() {
    if (held_) PyBuffer_Release(&view_);
  }
  // Whether `o` is an object of a type this handles at all (no Python code runs).
  static bool handles(PyObject* o);
  // Takes the buffer of `o`. False with `why` (no Python exception set).
  bool take(PyObject* o, std::string* why);

  DType dtype() const { return dtype_; }
  bool writeable() const { return !view_.readonly; }
  void* data() const { return view_.buf; }
  const Py_ssize_t* shape() const { return &len_; }
  const Py_ssize_t* strides() const { return &stride_; }

 private:
  Py_buffer view_{};
  bool held_ = false;
  DType dtype_ = DType::UInt8;
  Py_ssize_t len_ = 0, stride_ = 1;
};

}  // namespace stagepy::runtime
