// See py_buffer.h.
#include "hook/py_buffer.h"

#include <cstring>

namespace stagepy::runtime {

namespace {
// The item type of a struct format naming one native item ("d", "@i", "B"...).
bool format_dtype(const char* f, DType* d) {
  if (!f) f = "B";
  if (*f == '@') f++;
  if (!f[0] || f[1]) return false;
  switch (f[0]) {
    case 'b': *d = DType::Int8; return true;
    case 'B': *d = DType::UInt8; return true;
    case 'h': *d = DType::Int16; return true;
    case 'H': *d = DType::UInt16; return true;
    case 'i': *d = DType::Int32; return true;
    case 'I': *d = DType::UInt32; return true;
    case 'l': *d = sizeof(long) == 8 ? DType::Int64 : DType::Int32; return true;
    case 'q': *d = DType::Int64; return true;
    case 'f': *d = DType::Float32; return true;
    case 'd': *d = DType::Float64; return true;
    case '?': *d = DType::Bool; return true;
    default: return false;  // 'L'/'Q' (items beyond int64), 'c', 'e', structs...
  }
}
}  // namespace

bool HeldBuffer::handles(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  return t == &PyByteArray_Type || t == &PyBytes_Type || t == &PyMemoryView_Type ||
         std::strcmp(t->tp_name, "array.array") == 0;
}

bool HeldBuffer::take(PyObject* o, std::string* why) {
  if (PyObject_GetBuffer(o, &view_, PyBUF_RECORDS_RO) < 0) {
    PyErr_Clear();
    *why = "does not lend its buffer";
    return false;
  }
  held_ = true;
  if (view_.ndim != 1) {
    *why = "is a " + std::to_string(view_.ndim) + "-dimensional buffer";
    return false;
  }
  if (!format_dtype(view_.format, &dtype_) || view_.itemsize != dtype_size(dtype_)) {
    *why = std::string("has items of format '") + (view_.format ? view_.format : "B") + "'";
    return false;
  }
  if (((uintptr_t)view_.buf % (uintptr_t)view_.itemsize) != 0 || view_.strides[0] % view_.itemsize != 0) {
    *why = "is an unaligned buffer";
    return false;
  }
  len_ = view_.shape[0];
  stride_ = view_.strides[0];
  return true;
}

}  // namespace stagepy::runtime
