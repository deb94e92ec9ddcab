// NumPy seen from the runtime, through NumPy's C API (loaded lazily, only once a program
// has imported numpy): in, Python objects; out, the Types, keys, pointers and boxed
// scalars the dispatcher needs.
#pragma once
#include <Python.h>

#include <cstdint>
#include <string>

#include "ir/types.h"

namespace stagepy::runtime::np {

bool available();                  // numpy is imported and its C API is loaded
bool is_ndarray(PyObject* o);      // exactly numpy.ndarray (not a subclass)
// The Type of an ndarray, or nullptr with `why` (byte-swapped, unaligned, object dtype...).
TypeRef array_type(PyObject* a, std::string* why);
uint64_t array_key(PyObject* a);   // dtype, rank and layout flags: equal keys, equal types
bool scalar_dtype(PyObject* o, DType* d);  // exact NumPy scalar types
PyObject* box_scalar(DType d, uint64_t bits);  // new reference
uint64_t unbox_scalar(PyObject* o, DType d);   // the raw value bits of a NumPy scalar
PyObject* box_complex(DType d, double re, double im);         // new reference
void complex_parts(PyObject* o, DType d, double* re, double* im);  // of a NumPy complex scalar
// A new C-ordered ndarray of `d` with `ndim` extents `shape`, holding a copy of the items at
// `items` (C order); new reference.
PyObject* new_array(DType d, int ndim, const int64_t* shape, const void* items);
void* data(PyObject* a);
int ndim(PyObject* a);
const Py_ssize_t* shape(PyObject* a);
const Py_ssize_t* strides(PyObject* a);
// NumPy's floating-point error handling now (np.seterr / np.errstate), per condition.
enum class ErrAction : uint8_t { Ignore, Warn, Other };  // Other: raise, call, print, log
struct ErrState {
  ErrAction divide = ErrAction::Warn, over = ErrAction::Warn, under = ErrAction::Ignore, invalid = ErrAction::Warn;
};
ErrState err_state();  // cached while NumPy's errstate object stays the same
// Whether NumPy ignores floating-point underflow now (np.seterr's default). Kernels never
// report underflow, so they must not run when NumPy would warn or raise on it.
bool underflow_ignored();
int major_version();
// Finds NumPy's inner loop of ufunc `u` whose every argument is `d` and registers it with
// the oracle for builtin `b`. Returns false if there is none.
bool register_ufunc_loop(PyObject* u, Builtin b, DType d);
// NumPy's dot function of x's dtype on 1-d float arrays x and y, as a float (the self-test).
PyObject* run_dot(PyObject* x, PyObject* y);
// Runs the registered loop on `values` (floats) and returns the results (for the self-test).
PyObject* run_ufunc_loop(Builtin b, DType d, PyObject* values);
void unregister_ufunc_loop(Builtin b, DType d);
// The registered loop of (b, d) also gives, one element at a time, what the ufunc gives for
// whole arrays (the self-test found it so): kernels may use it on array elements.
void ufunc_loop_serves_arrays(Builtin b, DType d);

}  // namespace stagepy::runtime::np
