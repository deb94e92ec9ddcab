// Process-wide runtime state: the type oracle (filled from Python by probing the
// installed NumPy), the table of functions stagepy knows by identity, kernel ids.
#pragma once
#include <Python.h>

#include "ir/types.h"
#include "specialize/oracle.h"

namespace stagepy::runtime {

const specialize::Oracle& oracle();
specialize::Oracle& mutable_oracle();
// The builtin/math/numpy function `o` is, by identity; None_ if it is none of them.
Builtin known_callable(PyObject* o);
// Registers `o` as builtin `b` (from Python, where the objects are looked up by name).
void register_callable(PyObject* o, Builtin b);
// Functions of C that a nest inlines as a Python function written to compute the same
// (stagepy._twins: bisect.bisect_right's loop): the twin of `o`, or null. Borrowed.
PyObject* twin_of(PyObject* o);
bool is_twin(PyObject* fn);  // whether `fn` is such a twin
void register_twin(PyObject* o, PyObject* twin);
unsigned long long next_kernel_id();
// Whether stagepy._types.<fn>([arg]) (a self-test against the running CPython or the
// installed NumPy) returns True; false, with nothing raised, if it raises.
bool self_test_passes(const char* fn, const char* arg = nullptr);
// The Python function that gives a helper function's CodeInfo and parameter count, or a
// str saying why it cannot be inlined (stagepy._rewrite.helper_info). Borrowed; may be null.
PyObject* helper_info_fn();
void set_helper_info_fn(PyObject* fn);

}  // namespace stagepy::runtime
