// Access to the Python frame that called into the runtime (the frame running a nest's
// bytecode): in, the current thread; out, its variables by the IR's storage kinds, read
// and written as the bytecode instructions would.
#pragma once
#include <Python.h>

#include <string>

#include "ir/ir.h"

namespace stagepy::runtime {

struct FrameRef {
  void* frame = nullptr;        // _PyInterpreterFrame*
  PyCodeObject* code = nullptr;
  PyObject* locals = nullptr;   // f_locals (module/class code), borrowed
  PyObject* globals = nullptr;
  PyObject* builtins = nullptr;
  PyObject** localsplus = nullptr;
};

// The innermost Python frame of this thread. False if there is none (or it is not code).
bool caller_frame(FrameRef* out);

// Whether a tracer or a sys.monitoring tool watches this code (native code would hide
// line events from it).
bool being_traced(PyThreadState* ts, PyCodeObject* code);

// A variable's value: new reference, or nullptr with no error when it is unbound. -1 and an
// error only for failures of the lookup itself. `why` is set when the storage cannot be read
// without running Python code (a non-dict f_locals...).
int read_variable(const FrameRef& f, const ir::Var& v, PyObject** out, std::string* why);
// An attribute variable `base.name` (ir::Var::Storage::Attr), read as CPython's attribute
// lookup would find it, but only where that runs no Python code: from a module's dict, or
// from a plain object (plain_object()) through its instance dict, its class, or a slot.
// A property or another descriptor, or a missing attribute, sets `why` (CPython then
// runs the nest and does the lookup itself). For other bases (A.shape of an ndarray) *out
// stays nullptr: the nest computes the attribute itself. `name`: the attribute's name, an
// interned str. -1 only with an error set.
int read_attribute(PyObject* base, const ir::Var& v, PyObject* name, PyObject** out, std::string* why);
// An instance of a Python class (or a types.SimpleNamespace) with the default attribute
// lookup, whose attributes read_attribute can take.
bool plain_object(PyObject* o);
// Attribute `name` of plain object `o` as CPython's generic lookup finds it, where that runs
// no Python code: 0 with *out a new reference, or nullptr and `why` ("is a method", "is a
// property or another descriptor", "is not set"); -1 only with an error set. `own` (if
// given): whether the value is the object's own (its instance dict's or a slot's), not its
// class's, where setting the attribute would add it to the instance.
int object_attribute(PyObject* o, PyObject* name, PyObject** out, std::string* why, bool* own = nullptr);
// The plain Python function that `o.name(...)` calls with `o` first, where `o` is a plain
// object and finding it runs no Python code: its class's function of that name, which no
// attribute of the instance shadows. 1 with *fn borrowed (the class holds it); 0 where `o`
// is no plain object (`why` left empty) or `name` no such method of it (`why` says what it
// is); -1 only with an error set.
int method_function(PyObject* o, PyObject* name, PyObject** fn, std::string* why);
// For another object of a class method_function found `fn` on: 1 where an attribute of the
// object itself has the name (its lookup finds that), 0 where it finds `fn`, -1 with an error.
int method_shadowed(PyObject* o, PyObject* name, PyObject* fn);
// Sets a variable (steals nothing; `value` is borrowed). 0 or -1 with an error.
int write_variable(const FrameRef& f, const ir::Var& v, PyObject* value);

}  // namespace stagepy::runtime
