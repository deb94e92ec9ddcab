// See numpy_bridge.h.
#define PY_ARRAY_UNIQUE_SYMBOL stagepy_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "hook/numpy_bridge.h"

#include <cstdlib>
#include <cstring>

#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <numpy/ufuncobject.h>

#include "hook/py_ref.h"
#include "hook/runtime_state.h"

namespace stagepy::runtime::np {
namespace {

int g_state = 0;  // 0 not tried, 1 loaded, -1 failed
int g_major = 0;
PyArray_Descr* g_descr[kDTypes] = {};
PyObject* g_errvar = nullptr;       // NumPy's errstate context variable (NumPy 2)
PyObject* g_errvalue = nullptr;     // the value seen last (held, so its address stays its own)

const int kTypeNums[kDTypes] = {NPY_BOOL,   NPY_BYTE,  NPY_SHORT, NPY_INT,    NPY_LONG,   NPY_UBYTE, NPY_USHORT,
                                NPY_UINT,   NPY_ULONG, NPY_FLOAT, NPY_DOUBLE, NPY_CFLOAT, NPY_CDOUBLE};

bool dtype_of_num(int num, DType* d) {
  for (int i = 0; i < kDTypes; i++)
    if (kTypeNums[i] == num) {
      *d = static_cast<DType>(i);
      return true;
    }
  return false;
}

bool load() {
  if (g_state != 0) return g_state > 0;
  PyObject* modules = PyImport_GetModuleDict();
  PyObject* np = PyDict_GetItemString(modules, "numpy");
  if (!np) return false;  // not imported (yet): try later
  SavedError saved;
  {
    // Still being imported (a loop in NumPy's own modules, run while `import numpy` is under
    // way): its functions are not all there yet, so try later.
    PyRef spec = PyRef::steal(PyObject_GetAttrString(np, "__spec__"));
    PyRef init = spec ? PyRef::steal(PyObject_GetAttrString(spec.get(), "_initializing")) : PyRef();
    PyErr_Clear();
    if (init && PyObject_IsTrue(init.get()) == 1) return false;
    PyErr_Clear();
  }
  if (_import_array() < 0) {
    PyErr_Clear();
    g_state = -1;
    return false;
  }
  for (int i = 0; i < kDTypes; i++) g_descr[i] = PyArray_DescrFromType(kTypeNums[i]);
  // NumPy's dot functions of float64 and float32 (what np.dot and `@` call for 1-d arrays).
  for (int k = 0; k < 2; k++) {
    PyArray_Descr* descr = g_descr[static_cast<int>(k == 0 ? DType::Float64 : DType::Float32)];
#if defined(NPY_2_0_API_VERSION)
    PyArray_ArrFuncs* funcs = descr ? PyDataType_GetArrFuncs(descr) : nullptr;
#else
    PyArray_ArrFuncs* funcs = descr ? descr->f : nullptr;
#endif
    mutable_oracle().dot_fn[(size_t)k] = funcs ? (void*)funcs->dotfunc : nullptr;
  }
  PyRef numpy = PyRef::steal(PyImport_ImportModule("numpy"));
  if (numpy) {
    PyRef ver = PyRef::steal(PyObject_GetAttrString(numpy.get(), "__version__"));
    const char* v = ver ? PyUnicode_AsUTF8(ver.get()) : nullptr;
    g_major = v ? std::atoi(v) : 0;
  }
  PyErr_Clear();
  for (const char* mod : {"numpy._core._ufunc_config", "numpy.core._ufunc_config"}) {
    PyRef m = PyRef::steal(PyImport_ImportModule(mod));
    if (!m) { PyErr_Clear(); continue; }
    PyObject* var = PyObject_GetAttrString(m.get(), "_extobj_contextvar");
    if (var && PyContextVar_CheckExact(var)) { g_errvar = var; break; }
    Py_XDECREF(var);
    PyErr_Clear();
  }
  g_state = 1;
  // Let the Python side register NumPy's functions and probe its promotion rules.
  PyRef types_mod = PyRef::steal(PyImport_ImportModule("stagepy._types"));
  PyRef r = types_mod ? PyRef::steal(PyObject_CallMethod(types_mod.get(), "register_numpy", nullptr)) : PyRef();
  if (!r) PyErr_Clear();
  // NumPy's own loops (np.exp...) are self-tested when a kernel first needs one (codegen,
  // with the GIL held). One that fails the test, or whose test raises, stays unregistered:
  // the nest then stays interpreted and the report says no verified loop was found.
  mutable_oracle().sum_test.run = [] { return self_test_passes("verify_np_sum"); };
  mutable_oracle().dot_test.run = [] { return self_test_passes("verify_np_dot"); };
  mutable_oracle().verify_loop = [](Builtin b, DType d) {
    SavedError keep;
    PyRef m = PyRef::steal(PyImport_ImportModule("stagepy._types"));
    PyRef ok = m ? PyRef::steal(PyObject_CallMethod(m.get(), "verify_ufunc_loop", "ss", builtin_name(b), dtype_name(d)))
                 : PyRef();
    if (!ok) PyErr_Clear();
  };
  return true;
}

}  // namespace

bool available() { return load(); }

bool is_ndarray(PyObject* o) { return load() && Py_TYPE(o) == &PyArray_Type; }

TypeRef array_type(PyObject* o, std::string* why) {
  auto* a = (PyArrayObject*)o;
  DType d;
  PyArray_Descr* descr = PyArray_DESCR(a);
  if (!dtype_of_num(descr->type_num, &d)) {
    *why = "an array of dtype " + std::string(Py_TYPE(descr)->tp_name) + " (num " + std::to_string(descr->type_num) + ")";
    PyRef s = PyRef::steal(PyObject_Str((PyObject*)descr));
    if (s) *why = std::string("an array of dtype ") + PyUnicode_AsUTF8(s.get());
    PyErr_Clear();
    return nullptr;
  }
  if (!PyArray_ISNOTSWAPPED(a)) { *why = "a byte-swapped array"; return nullptr; }
  if (!PyArray_ISALIGNED(a)) { *why = "an unaligned array"; return nullptr; }
  auto layout = PyArray_IS_C_CONTIGUOUS(a) ? Type::CContig : PyArray_IS_F_CONTIGUOUS(a) ? Type::FContig : Type::Strided;
  return types::array(d, PyArray_NDIM(a), layout, PyArray_ISWRITEABLE(a));
}

uint64_t array_key(PyObject* o) {
  auto* a = (PyArrayObject*)o;
  uint64_t k = (uint64_t)(PyArray_DESCR(a)->type_num & 0xffff);
  k |= (uint64_t)(PyArray_NDIM(a) & 0xff) << 16;
  k |= (uint64_t)PyArray_IS_C_CONTIGUOUS(a) << 24;
  k |= (uint64_t)PyArray_IS_F_CONTIGUOUS(a) << 25;
  k |= (uint64_t)PyArray_ISWRITEABLE(a) << 26;
  k |= (uint64_t)PyArray_ISALIGNED(a) << 27;
  k |= (uint64_t)PyArray_ISNOTSWAPPED(a) << 28;
  return k;
}

bool scalar_dtype(PyObject* o, DType* d) {
  if (g_state <= 0) return false;
  PyTypeObject* t = Py_TYPE(o);
  if (t == &PyDoubleArrType_Type) { *d = DType::Float64; return true; }
  if (t == &PyFloatArrType_Type) { *d = DType::Float32; return true; }
  if (t == &PyLongArrType_Type) { *d = DType::Int64; return true; }
  if (t == &PyIntArrType_Type) { *d = DType::Int32; return true; }
  if (t == &PyShortArrType_Type) { *d = DType::Int16; return true; }
  if (t == &PyByteArrType_Type) { *d = DType::Int8; return true; }
  if (t == &PyULongArrType_Type) { *d = DType::UInt64; return true; }
  if (t == &PyUIntArrType_Type) { *d = DType::UInt32; return true; }
  if (t == &PyUShortArrType_Type) { *d = DType::UInt16; return true; }
  if (t == &PyUByteArrType_Type) { *d = DType::UInt8; return true; }
  if (t == &PyBoolArrType_Type) { *d = DType::Bool; return true; }
  if (t == &PyCDoubleArrType_Type) { *d = DType::Complex128; return true; }
  if (t == &PyCFloatArrType_Type) { *d = DType::Complex64; return true; }
  return false;
}

PyObject* new_array(DType d, int ndim, const int64_t* shape, const void* items) {
  if (!load()) {
    PyErr_SetString(PyExc_SystemError, "stagepy: NumPy C API unavailable");
    return nullptr;
  }
  npy_intp dims[NPY_MAXDIMS];
  size_t n = 1;
  for (int k = 0; k < ndim; k++) {
    dims[k] = (npy_intp)shape[k];
    n *= (size_t)shape[k];
  }
  PyArray_Descr* descr = g_descr[static_cast<int>(d)];
  Py_INCREF(descr);  // PyArray_NewFromDescr steals it
  PyObject* a = PyArray_NewFromDescr(&PyArray_Type, descr, ndim, dims, nullptr, nullptr, 0, nullptr);
  if (a && n) std::memcpy(PyArray_DATA((PyArrayObject*)a), items, n * (size_t)dtype_size(d));
  return a;
}

PyObject* box_complex(DType d, double re, double im) {
  if (!load()) {
    PyErr_SetString(PyExc_SystemError, "stagepy: NumPy C API unavailable");
    return nullptr;
  }
  if (d == DType::Complex64) {
    npy_cfloat v;
    float parts[2] = {(float)re, (float)im};
    std::memcpy(&v, parts, sizeof parts);
    return PyArray_Scalar(&v, g_descr[static_cast<int>(d)], nullptr);
  }
  npy_cdouble v;
  double parts[2] = {re, im};
  std::memcpy(&v, parts, sizeof parts);
  return PyArray_Scalar(&v, g_descr[static_cast<int>(DType::Complex128)], nullptr);
}

void complex_parts(PyObject* o, DType d, double* re, double* im) {
  unsigned char buf[16] = {};
  PyArray_ScalarAsCtype(o, buf);
  if (d == DType::Complex64) {
    float f[2];
    std::memcpy(f, buf, sizeof f);
    *re = f[0];
    *im = f[1];
    return;
  }
  double x[2];
  std::memcpy(x, buf, sizeof x);
  *re = x[0];
  *im = x[1];
}

PyObject* box_scalar(DType d, uint64_t bits) {
  if (!load()) {
    PyErr_SetString(PyExc_SystemError, "stagepy: NumPy C API unavailable");
    return nullptr;
  }
  union {
    uint64_t u;
    int8_t i8; int16_t i16; int32_t i32; int64_t i64;
    uint8_t u8; uint16_t u16; uint32_t u32;
    float f32; double f64;
    npy_bool b;
  } v;
  v.u = 0;
  switch (d) {
    case DType::Bool: v.b = (npy_bool)(bits & 1); break;
    case DType::Int8: v.i8 = (int8_t)bits; break;
    case DType::Int16: v.i16 = (int16_t)bits; break;
    case DType::Int32: v.i32 = (int32_t)bits; break;
    case DType::Int64: v.i64 = (int64_t)bits; break;
    case DType::UInt8: v.u8 = (uint8_t)bits; break;
    case DType::UInt16: v.u16 = (uint16_t)bits; break;
    case DType::UInt32: v.u32 = (uint32_t)bits; break;
    case DType::UInt64: v.u = bits; break;
    case DType::Float32: {
      uint32_t w = (uint32_t)bits;
      std::memcpy(&v.f32, &w, 4);
      break;
    }
    case DType::Float64: std::memcpy(&v.f64, &bits, 8); break;
    case DType::Complex64: case DType::Complex128:
      PyErr_SetString(PyExc_SystemError, "stagepy: a complex number boxed from one word");
      return nullptr;
  }
  return PyArray_Scalar(&v, g_descr[static_cast<int>(d)], nullptr);
}

uint64_t unbox_scalar(PyObject* o, DType d) {
  unsigned char buf[16] = {};
  PyArray_ScalarAsCtype(o, buf);
  uint64_t bits = 0;
  std::memcpy(&bits, buf, (size_t)dtype_size(d));
  return bits;
}

void* data(PyObject* a) { return PyArray_DATA((PyArrayObject*)a); }
int ndim(PyObject* a) { return PyArray_NDIM((PyArrayObject*)a); }
const Py_ssize_t* shape(PyObject* a) { return PyArray_DIMS((PyArrayObject*)a); }
const Py_ssize_t* strides(PyObject* a) { return PyArray_STRIDES((PyArrayObject*)a); }
int major_version() { load(); return g_major; }

bool register_ufunc_loop(PyObject* u, Builtin b, DType d) {
  // (The ufunc C API table is not loaded; the struct layout is all that is used.)
  if (!load() || std::strcmp(Py_TYPE(u)->tp_name, "numpy.ufunc") != 0) return false;
  auto* uf = (PyUFuncObject*)u;
  int num = kTypeNums[static_cast<int>(d)];
  for (int i = 0; i < uf->ntypes; i++) {
    bool all = true;
    for (int k = 0; k < uf->nargs; k++) all = all && uf->types[i * uf->nargs + k] == num;
    if (!all || !uf->functions || !uf->functions[i]) continue;
    specialize::Oracle::UfuncLoop loop;
    loop.fn = (void*)uf->functions[i];
    loop.data = uf->data ? uf->data[i] : nullptr;
    mutable_oracle().ufunc_loops[{static_cast<int>(b), static_cast<int>(d)}] = loop;
    return true;
  }
  return false;
}

void ufunc_loop_serves_arrays(Builtin b, DType d) {
  auto& loops = mutable_oracle().ufunc_loops;
  auto it = loops.find({static_cast<int>(b), static_cast<int>(d)});
  if (it != loops.end()) it->second.arrays = true;
}

void unregister_ufunc_loop(Builtin b, DType d) {
  mutable_oracle().ufunc_loops.erase({static_cast<int>(b), static_cast<int>(d)});
}

PyObject* run_dot(PyObject* x, PyObject* y) {
  if (!load() || !PyArray_Check(x) || !PyArray_Check(y)) return PyErr_Format(PyExc_TypeError, "two arrays expected");
  auto* a = (PyArrayObject*)x;
  auto* b = (PyArrayObject*)y;
  const int t = PyArray_TYPE(a);
  if (PyArray_NDIM(a) != 1 || PyArray_NDIM(b) != 1 || PyArray_TYPE(b) != t || (t != NPY_DOUBLE && t != NPY_FLOAT) ||
      PyArray_DIM(a, 0) != PyArray_DIM(b, 0))
    return PyErr_Format(PyExc_ValueError, "two 1-d float arrays of one length and dtype expected");
  void* fn = oracle().dot_fn[t == NPY_DOUBLE ? 0 : 1];
  if (!fn) Py_RETURN_NONE;
  double out = 0;
  float outf = 0;
  ((PyArray_DotFunc*)fn)((char*)PyArray_DATA(a), PyArray_STRIDE(a, 0), (char*)PyArray_DATA(b), PyArray_STRIDE(b, 0),
                         t == NPY_DOUBLE ? (char*)&out : (char*)&outf, PyArray_DIM(a, 0), nullptr);
  return PyFloat_FromDouble(t == NPY_DOUBLE ? out : (double)outf);
}

PyObject* run_ufunc_loop(Builtin b, DType d, PyObject* values) {
  const auto* loop = oracle().ufunc_loop(b, d);
  if (!loop) Py_RETURN_NONE;
  PyRef seq = PyRef::steal(PySequence_Fast(values, "values"));
  if (!seq) return nullptr;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
  int nin = specialize::builtin_arity(b) == 2 ? 2 : 1;
  PyRef out = PyRef::steal(PyList_New(0));
  auto fn = (PyUFuncGenericFunction)loop->fn;
  if (dtype_is_complex(d)) {  // one complex argument, as kernels call it (NpCLoop)
    for (Py_ssize_t i = 0; i < n; i++) {
      Py_complex c = PyComplex_AsCComplex(PySequence_Fast_GET_ITEM(seq.get(), i));
      if (PyErr_Occurred()) return nullptr;
      double in[2] = {c.real, c.imag}, res[2] = {0, 0};
      float inf[2] = {(float)c.real, (float)c.imag}, resf[2] = {0, 0};
      const bool single = d == DType::Complex64;
      char* args[2] = {single ? (char*)inf : (char*)in, single ? (char*)resf : (char*)res};
      npy_intp dims[1] = {1}, steps[2] = {0, 0};
      fn(args, dims, steps, loop->data);
      PyRef v = PyRef::steal(single ? PyComplex_FromDoubles(resf[0], resf[1]) : PyComplex_FromDoubles(res[0], res[1]));
      if (!v || PyList_Append(out.get(), v.get()) < 0) return nullptr;
    }
    return out.release();
  }
  for (Py_ssize_t i = 0; i + nin <= n; i += nin) {
    double in[2] = {}, res = 0;
    float inf[2] = {}, resf = 0;
    for (int k = 0; k < nin; k++) in[k] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq.get(), i + k));
    if (PyErr_Occurred()) return nullptr;
    char* args[3];
    npy_intp dims[1] = {1}, steps[3] = {0, 0, 0};
    if (d == DType::Float32) {
      for (int k = 0; k < nin; k++) { inf[k] = (float)in[k]; args[k] = (char*)&inf[k]; }
      args[nin] = (char*)&resf;
      fn(args, dims, steps, loop->data);
      res = resf;
    } else {
      for (int k = 0; k < nin; k++) args[k] = (char*)&in[k];
      args[nin] = (char*)&res;
      fn(args, dims, steps, loop->data);
    }
    PyRef v = PyRef::steal(PyFloat_FromDouble(res));
    if (!v || PyList_Append(out.get(), v.get()) < 0) return nullptr;
  }
  return out.release();
}

ErrState err_state() {
  static ErrState cached;
  static bool have = false;
  if (!load()) return ErrState{};
  PyObject* value = nullptr;
  if (g_errvar) {
    if (PyContextVar_Get(g_errvar, nullptr, &value) < 0) {
      PyErr_Clear();
      ErrState unknown;
      unknown.divide = unknown.over = unknown.under = unknown.invalid = ErrAction::Other;
      return unknown;
    }
    if (have && value == g_errvalue) {
      Py_XDECREF(value);
      return cached;
    }
  }
  SavedError saved;
  PyRef numpy = PyRef::steal(PyImport_ImportModule("numpy"));
  PyRef err = numpy ? PyRef::steal(PyObject_CallMethod(numpy.get(), "geterr", nullptr)) : PyRef();
  auto action = [&](const char* key) {
    PyObject* a = err ? PyDict_GetItemString(err.get(), key) : nullptr;
    if (!a || !PyUnicode_Check(a)) return ErrAction::Other;
    if (PyUnicode_CompareWithASCIIString(a, "ignore") == 0) return ErrAction::Ignore;
    if (PyUnicode_CompareWithASCIIString(a, "warn") == 0) return ErrAction::Warn;
    return ErrAction::Other;
  };
  ErrState st;
  st.divide = action("divide");
  st.over = action("over");
  st.under = action("under");
  st.invalid = action("invalid");
  PyErr_Clear();
  if (g_errvar) {
    Py_XSETREF(g_errvalue, value);  // takes the reference PyContextVar_Get returned
    cached = st;
    have = true;
  }
  return st;
}

bool underflow_ignored() { return err_state().under == ErrAction::Ignore; }

}  // namespace stagepy::runtime::np
