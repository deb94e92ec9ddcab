// PyRef: an owning reference to a Python object (RAII over Py_INCREF/Py_DECREF).
// The only place in src/hook where reference counts are managed by hand.
#pragma once
#include <Python.h>
#include <utility>

namespace stagepy {

class PyRef {
public:
  PyRef() = default;
  // Takes ownership of a new reference (may be NULL).
  static PyRef steal(PyObject* o) { PyRef r; r.p_ = o; return r; }
  // Adds a reference to a borrowed object (may be NULL).
  static PyRef borrow(PyObject* o) { Py_XINCREF(o); return steal(o); }

  PyRef(const PyRef& o) : p_(o.p_) { Py_XINCREF(p_); }
  PyRef(PyRef&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  PyRef& operator=(PyRef o) noexcept { std::swap(p_, o.p_); return *this; }
  ~PyRef() { Py_XDECREF(p_); }

  PyObject* get() const { return p_; }
  PyObject* release() { PyObject* o = p_; p_ = nullptr; return o; }
  explicit operator bool() const { return p_ != nullptr; }
  void reset() { Py_CLEAR(p_); }

private:
  PyObject* p_ = nullptr;
};

// Saves the pending exception (if any) and restores it on scope exit, so that
// callbacks run from inside the interpreter never disturb the program's own error.
class SavedError {
public:
#if PY_VERSION_HEX >= 0x030C0000
  SavedError() : exc_(PyErr_GetRaisedException()) {}
  ~SavedError() { PyErr_SetRaisedException(exc_); }
private:
  PyObject* exc_;
#else
  SavedError() { PyErr_Fetch(&t_, &v_, &tb_); }
  ~SavedError() { PyErr_Restore(t_, v_, tb_); }
private:
  PyObject *t_ = nullptr, *v_ = nullptr, *tb_ = nullptr;
#endif
};

}  // namespace stagepy
