// See frame_access.h.
#include "hook/frame_access.h"

#include <cstring>

#include "hook/cpython_internals.h"
#include "hook/py_ref.h"

namespace stagepy::runtime {

#if STAGEPY_HOOK_SUPPORTED
bool caller_frame(FrameRef* out) {
  PyThreadState* ts = PyThreadState_Get();
  cpy::Frame* f = cpy::current_frame(ts);
#if PY_VERSION_HEX >= 0x030C0000
  while (f && f->owner == FRAME_OWNED_BY_CSTACK) f = f->previous;
#endif
  if (!f) return false;
  PyCodeObject* co = cpy::frame_code(f);
  if (!co) return false;
  out->frame = f;
  out->code = co;
  out->locals = f->f_locals;
  out->globals = f->f_globals;
  out->builtins = f->f_builtins;
  out->localsplus = f->localsplus;
  return true;
}

bool being_traced(PyThreadState* ts, PyCodeObject* code) {
  if (ts->c_tracefunc != nullptr) return true;
#if PY_VERSION_HEX >= 0x030C0000
  if (code->_co_monitoring != nullptr) {
    const auto& active = code->_co_monitoring->active_monitors.tools;
    for (size_t i = 0; i < sizeof active / sizeof active[0]; i++)
      if (active[i]) return true;
  }
#else
  if (ts->cframe->use_tracing) return true;
#endif
  return false;
}
#else
bool caller_frame(FrameRef*) { return false; }
bool being_traced(PyThreadState*, PyCodeObject*) { return true; }
#endif

namespace {
PyObject* name_object(const ir::Var& v) { return PyUnicode_FromStringAndSize(v.name.data(), (Py_ssize_t)v.name.size()); }

// dict[name] as a new reference, nullptr if missing; -1 on error.
int dict_lookup(PyObject* d, PyObject* key, PyObject** out) {
  PyObject* r = PyDict_GetItemWithError(d, key);
  if (!r) {
    *out = nullptr;
    return PyErr_Occurred() ? -1 : 0;
  }
  *out = Py_NewRef(r);
  return 0;
}
}  // namespace

int read_variable(const FrameRef& f, const ir::Var& v, PyObject** out, std::string* why) {
  *out = nullptr;
  switch (v.storage) {
    case ir::Var::Storage::Fast:
      *out = Py_XNewRef(f.localsplus[v.index]);
      return 0;
    case ir::Var::Storage::Cell: {
      PyObject* cell = f.localsplus[v.index];
      if (!cell || !PyCell_Check(cell)) {
        *why = "the cell of `" + v.name + "` is not set up";
        return 0;
      }
      *out = Py_XNewRef(PyCell_GET(cell));
      return 0;
    }
    case ir::Var::Storage::Name:
    case ir::Var::Storage::Global: {
      PyObject* key = name_object(v);
      if (!key) return -1;
      int rc = 0;
      if (v.storage == ir::Var::Storage::Name && f.locals) {
        if (!PyDict_CheckExact(f.locals)) {
          *why = "the frame's locals are not a dict";
          Py_DECREF(key);
          return 0;
        }
        rc = dict_lookup(f.locals, key, out);
      }
      if (rc == 0 && !*out && f.globals && PyDict_Check(f.globals)) rc = dict_lookup(f.globals, key, out);
      if (rc == 0 && !*out && f.builtins) {
        if (PyDict_Check(f.builtins)) rc = dict_lookup(f.builtins, key, out);
        else *why = "builtins is not a dict";
      }
      Py_DECREF(key);
      return rc;
    }
    case ir::Var::Storage::Attr:
      *why = "internal error: attribute read as a variable";
      return 0;
    case ir::Var::Storage::Builtin: {
      // The builtins module's, not the frame's names (held for the process's life).
      static PyObject* builtins_dict = nullptr;
      if (!builtins_dict) {
        PyObject* mod = PyImport_ImportModule("builtins");
        if (!mod) return -1;
        builtins_dict = Py_NewRef(PyModule_GetDict(mod));
        Py_DECREF(mod);
      }
      PyRef key = PyRef::steal(name_object(v));
      return key ? dict_lookup(builtins_dict, key.get(), out) : -1;
    }
    case ir::Var::Storage::Part:
    case ir::Var::Storage::Temp:
    case ir::Var::Storage::Table:   // (made by the dispatcher)
    case ir::Var::Storage::Method:  // (found by the dispatcher)
      return 0;  // no value at entry
  }
  return 0;
}

bool plain_object(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  if (t->tp_getattro != PyObject_GenericGetAttr || PyType_Check(o) || PyModule_Check(o)) return false;
  return PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE) || std::strcmp(t->tp_name, "types.SimpleNamespace") == 0;
}

int read_attribute(PyObject* base, const ir::Var& v, PyObject* name, PyObject** out, std::string* why) {
  *out = nullptr;
  if (!base) return 0;
  if (PyModule_CheckExact(base)) {
    PyObject* x = PyDict_GetItemWithError(PyModule_GetDict(base), name);
    if (!x && PyErr_Occurred()) return -1;
    *out = Py_XNewRef(x);
    return 0;
  }
  if (!plain_object(base)) return 0;
  if (object_attribute(base, name, out, why) < 0) return -1;
  if (!why->empty()) *why = "`" + v.name + "` " + *why;
  return 0;
}

namespace {
// A named tuple's field descriptor: the C type _tuplegetter (`_collections._tuplegetter` on
// 3.11, `collections._tuplegetter`, a heap type, from 3.12), whose __get__ is its C slot's
// wrapper (a class of that name written in Python would have a function there).
bool is_tuple_getter(PyObject* descr) {
  PyTypeObject* t = Py_TYPE(descr);
  if (std::strcmp(t->tp_name, "_collections._tuplegetter") != 0 && std::strcmp(t->tp_name, "collections._tuplegetter") != 0)
    return false;
  static PyObject* get_name = PyUnicode_InternFromString("__get__");  // (held for the process's life)
  PyObject* get = get_name ? _PyType_Lookup(t, get_name) : nullptr;
  return get && Py_TYPE(get) == &PyWrapperDescr_Type;
}
}  // namespace

int object_attribute(PyObject* o, PyObject* name, PyObject** out, std::string* why, bool* own) {
  *out = nullptr;
  // A descriptor on the class decides the lookup: only slots (C members) and functions
  // (the instance dict may shadow them; else a bound method, which stays unsupported)
  // are read without running code.
  PyObject* descr = _PyType_Lookup(Py_TYPE(o), name);
  const bool member = descr && Py_TYPE(descr) == &PyMemberDescr_Type;
  if (descr && !member && PyTuple_Check(o) && is_tuple_getter(descr)) {
    // A named tuple's field: its C getter returns the tuple's item (runs no Python code).
    *out = Py_TYPE(descr)->tp_descr_get(descr, o, (PyObject*)Py_TYPE(o));
    if (!*out) {
      if (!PyErr_ExceptionMatches(PyExc_IndexError) && !PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
      PyErr_Clear();
      *why = "is not set";
    }
    if (own && *out) {  // (assigned: CPython raises AttributeError)
      Py_CLEAR(*out);
      *why = "is a named tuple's field, which cannot be assigned";
    }
    return 0;
  }
  if (descr && Py_TYPE(descr)->tp_descr_get && !member && !PyFunction_Check(descr)) {
    *why = Py_TYPE(descr) == &PyMethodDescr_Type || Py_TYPE(descr) == &PyClassMethodDescr_Type
               ? "is a method"
               : "is a property or another descriptor";
    return 0;
  }
  *out = PyObject_GenericGetAttr(o, name);
  if (!*out) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    *why = "is not set";
    return 0;
  }
  if (own) {
    // Found with no class attribute of the name, or in a slot: the object's own. Else the
    // instance dict may shadow the class's.
    *own = !descr || member;
    if (!*own) {
      PyRef dict = PyRef::steal(PyObject_GenericGetDict(o, nullptr));
      if (!dict) {  // no instance dict (slots only): the class's
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
        PyErr_Clear();
        return 0;
      }
      PyObject* x = PyDict_GetItemWithError(dict.get(), name);
      if (!x && PyErr_Occurred()) return -1;
      *own = x != nullptr;
    }
  }
  return 0;
}

int method_function(PyObject* o, PyObject* name, PyObject** fn, std::string* why) {
  *fn = nullptr;
  if (!plain_object(o)) return 0;
  PyObject* descr = _PyType_Lookup(Py_TYPE(o), name);
  if (!descr) {
    *why = "is no method of its class";
    return 0;
  }
  if (!PyFunction_Check(descr)) {
    *why = "is not a plain Python function of its class (a staticmethod, a classmethod, a property or a builtin "
           "type's method)";
    return 0;
  }
  const int own = method_shadowed(o, name, descr);
  if (own != 0) {
    if (own > 0) *why = "is an attribute of the object itself, not its class's method";
    return own > 0 ? 0 : -1;
  }
  *fn = descr;
  return 1;
}

int method_shadowed(PyObject* o, PyObject* name, PyObject* fn) {
  if (Py_TYPE(o)->tp_dictoffset == 0) return 0;  // (no instance dict)
  // An instance dict may hold the name: the lookup then finds its value, not the class's
  // function (CPython's own method lookup, which runs no Python code here: the class's
  // attribute is a plain function, the object's lookup the generic one).
#if STAGEPY_HOOK_SUPPORTED
  PyObject* m = nullptr;
  const int found = _PyObject_GetMethod(o, name, &m);
  PyRef got = PyRef::steal(m);
  if (!got) return -1;
  return found != 1 || got.get() != fn ? 1 : 0;
#else
  PyRef got = PyRef::steal(PyObject_GenericGetAttr(o, name));
  if (!got) return -1;
  return !PyMethod_Check(got.get()) || PyMethod_GET_FUNCTION(got.get()) != fn || PyMethod_GET_SELF(got.get()) != o ? 1 : 0;
#endif
}

int write_variable(const FrameRef& f, const ir::Var& v, PyObject* value) {
  switch (v.storage) {
    case ir::Var::Storage::Fast:
      Py_XSETREF(f.localsplus[v.index], Py_NewRef(value));
      return 0;
    case ir::Var::Storage::Cell:
      return PyCell_Set(f.localsplus[v.index], value);
    case ir::Var::Storage::Name:
    case ir::Var::Storage::Global: {
      PyObject* target = v.storage == ir::Var::Storage::Name && f.locals ? f.locals : f.globals;
      PyObject* key = name_object(v);
      if (!key) return -1;
      int rc = PyObject_SetItem(target, key, value);
      Py_DECREF(key);
      return rc;
    }
    case ir::Var::Storage::Attr:
      PyErr_SetString(PyExc_SystemError, "stagepy: cannot write an attribute pseudo-variable");
      return -1;
    case ir::Var::Storage::Part:
    case ir::Var::Storage::Temp:
    case ir::Var::Storage::Builtin:
    case ir::Var::Storage::Table:
    case ir::Var::Storage::Method:
      // Not the frame's variables (lowered IR's own, a desugared loop's): never written back.
      PyErr_SetString(PyExc_SystemError, "stagepy: cannot write a lowered IR variable to the frame");
      return -1;
  }
  return 0;
}

}  // namespace stagepy::runtime
