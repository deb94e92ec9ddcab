// See runtime_module.h.
#include "backends/cpu/jit.h"
#include "hook/runtime_module.h"

#include "backends/cpu/parallel_runtime.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/vector_norm.h"
#include "backends/gpu/gpu_runtime.h"

#include "hook/dispatch.h"
#include "hook/nest_object.h"
#include "hook/nest_runtime.h"
#include "hook/numpy_bridge.h"
#include "hook/numpy_random.h"
#include "hook/random_generator.h"
#include "hook/runtime_state.h"
#include "specialize/oracle.h"
#include "support/debug.h"
#include "support/version.h"

namespace stagepy::runtime {
namespace {

PyObject* py_isl_info(PyObject*, PyObject*) {
  return Py_BuildValue("{s:s,s:s,s:O}", "version", isl_version_string().c_str(), "library",
                       isl_library_path().c_str(), "real", isl_is_real() ? Py_True : Py_False);
}

// gpu_info(): whether kernels get GPU versions, the device, and the process's GPU figures.
PyObject* py_gpu_info(PyObject*, PyObject*) {
  namespace g = backends::gpu;
  std::string why;
  const bool wanted = g::gpu_wanted(&why);
  const g::Device* dev = nullptr;
  std::string dwhy;
  const bool device = g::driver(&dev, &dwhy) != nullptr;
  const g::GpuStats st = g::stats();
  const char* target = g::target() == g::Target::Cpu ? "cpu" : g::target() == g::Target::Gpu ? "gpu" : "auto";
  return Py_BuildValue("{s:O,s:s,s:O,s:O,s:s,s:s,s:s,s:K,s:K,s:K,s:K,s:d,s:d,s:d}", "enabled", wanted ? Py_True : Py_False,
                       "why_not", wanted ? "" : why.c_str(), "device", device ? Py_True : Py_False, "emulated",
                       g::emulating() ? Py_True : Py_False, "name", device ? dev->name.c_str() : dwhy.c_str(), "arch",
                       g::device_arch().c_str(), "target", target, "launches", st.launches, "h2d_bytes", st.h2d_bytes,
                       "d2h_bytes", st.d2h_bytes, "h2d_skipped_bytes", st.h2d_skipped_bytes, "h2d_s", st.h2d_s, "d2h_s", st.d2h_s, "kernel_s", st.kernel_s);
}

// set_target("cpu" | "gpu" | "auto")
PyObject* py_set_target(PyObject*, PyObject* arg) {
  namespace g = backends::gpu;
  const char* t = PyUnicode_AsUTF8(arg);
  if (!t) return nullptr;
  std::string s = t;
  if (s == "cpu") g::set_target(g::Target::Cpu);
  else if (s == "gpu") g::set_target(g::Target::Gpu);
  else if (s == "auto") g::set_target(g::Target::Auto);
  else return PyErr_Format(PyExc_ValueError, "target must be 'cpu', 'gpu' or 'auto', not %R", arg);
  Py_RETURN_NONE;
}

PyObject* py_llvm_version(PyObject*, PyObject*) { return PyLong_FromLong(llvm_major_version()); }

PyObject* py_nest_records(PyObject*, PyObject*) { return nest_records(); }
PyObject* py_nest_records_dropped(PyObject*, PyObject*) { return PyLong_FromUnsignedLongLong(retired_records_dropped()); }

// scratch_bytes(): what the calling thread's kernel scratch buffers hold (scratch.h).
PyObject* py_scratch_bytes(PyObject*, PyObject*) { return PyLong_FromLongLong(backends::cpu::scratch_bytes()); }

// set_oracle_entries([(kind, op, a, b, result), ...], numpy_major)
PyObject* py_set_oracle_entries(PyObject*, PyObject* args) {
  PyObject* entries;
  int major;
  if (!PyArg_ParseTuple(args, "Oi", &entries, &major)) return nullptr;
  PyObject* seq = PySequence_Fast(entries, "entries");
  if (!seq) return nullptr;
  auto& o = mutable_oracle();
  o.numpy_weak_scalars = major >= 2;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
    const char *kind, *op, *result;
    int a, b;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ssiis", &kind, &op, &a, &b, &result)) {
      Py_DECREF(seq);
      return nullptr;
    }
    if (!o.set_entry(kind, op, a, b, result)) {
      Py_DECREF(seq);
      return PyErr_Format(PyExc_ValueError, "bad oracle entry %s %s", kind, op);
    }
  }
  Py_DECREF(seq);
  Py_RETURN_NONE;
}

// register_callable(obj, "math.sqrt")
PyObject* py_register_callable(PyObject*, PyObject* args) {
  PyObject* obj;
  const char* name;
  if (!PyArg_ParseTuple(args, "Os", &obj, &name)) return nullptr;
  Builtin b = specialize::builtin_from_name(name);
  if (b == Builtin::None_) return PyErr_Format(PyExc_ValueError, "unknown builtin %s", name);
  register_callable(obj, b);
  Py_RETURN_NONE;
}

// register_twin(c_function, python_function): nests inline the second where they call the
// first (runtime_state.h).
PyObject* py_register_twin(PyObject*, PyObject* args) {
  PyObject *obj, *twin;
  if (!PyArg_ParseTuple(args, "OO!", &obj, &PyFunction_Type, &twin)) return nullptr;
  register_twin(obj, twin);
  Py_RETURN_NONE;
}

// register_numpy_random(np.random.mtrand._rand, its state address, a probe RandomState, its
// state address, the offset of the cached normal, [(function, kind), ...]): None once kernels
// draw from NumPy's global generator, else why not (numpy_random.h).
PyObject* py_register_numpy_random(PyObject*, PyObject* args) {
  PyObject *inst, *probe, *functions;
  unsigned long long inst_state, probe_state;
  long gauss_offset;
  if (!PyArg_ParseTuple(args, "OKOKlO!", &inst, &inst_state, &probe, &probe_state, &gauss_offset, &PyList_Type, &functions))
    return nullptr;
  const std::string why = register_numpy_random(inst, inst_state, probe, probe_state, gauss_offset, functions);
  if (why.empty()) Py_RETURN_NONE;
  return PyUnicode_FromString(why.c_str());
}

// register_random(random._inst, random.Random(seed), (random.random, random.uniform,
// random.randint, random.randrange, random.choice, random.gauss, random.normalvariate,
// random.expovariate), vars(random)): None once kernels draw from the generator, else why not.
PyObject* py_register_random(PyObject*, PyObject* args) {
  PyObject *inst, *probe, *functions, *globals;
  if (!PyArg_ParseTuple(args, "OOOO!", &inst, &probe, &functions, &PyDict_Type, &globals)) return nullptr;
  const std::string why = register_random(inst, probe, functions, globals);
  if (why.empty()) Py_RETURN_NONE;
  return PyUnicode_FromString(why.c_str());
}

// _ufunc_loop(ufunc, "numpy.exp", "float64", action, values): action "register",
// "run" (the self-test), "unregister", or "arrays" (its elements are also what the ufunc
// gives for arrays).
PyObject* py_ufunc_loop(PyObject*, PyObject* args) {
  PyObject *ufunc, *values = nullptr;
  const char *name, *dtype, *action;
  if (!PyArg_ParseTuple(args, "Osss|O", &ufunc, &name, &dtype, &action, &values)) return nullptr;
  Builtin b = specialize::builtin_from_name(name);
  const std::string dt = dtype;
  DType d = dt == "float32" ? DType::Float32 : dt == "complex128" ? DType::Complex128
          : dt == "complex64" ? DType::Complex64 : DType::Float64;
  if (b == Builtin::None_) return PyErr_Format(PyExc_ValueError, "unknown builtin %s", name);
  std::string a = action;
  if (a == "register") return PyBool_FromLong(np::register_ufunc_loop(ufunc, b, d));
  if (a == "unregister") {
    np::unregister_ufunc_loop(b, d);
    Py_RETURN_NONE;
  }
  if (a == "run") return np::run_ufunc_loop(b, d, values);
  if (a == "arrays") {
    np::ufunc_loop_serves_arrays(b, d);
    Py_RETURN_NONE;
  }
  return PyErr_Format(PyExc_ValueError, "unknown action %s", action);
}

// _run_dot(x, y): NumPy's dot function as kernels call it (for _types.verify_np_dot).
PyObject* py_run_dot(PyObject*, PyObject* args) {
  PyObject *x, *y;
  if (!PyArg_ParseTuple(args, "OO", &x, &y)) return nullptr;
  return np::run_dot(x, y);
}

// _hypot(x, y): math.hypot as kernels compute it (for _types.verify_hypot).
PyObject* py_hypot(PyObject*, PyObject* args) {
  double x, y;
  if (!PyArg_ParseTuple(args, "dd", &x, &y)) return nullptr;
  return PyFloat_FromDouble(stagepy_math_hypot(x, y));
}

// _cfunc("sqrt", a, b): stagepy_cfunc as kernels call it, of complex numbers a and b (for
// _types.verify_cfunc): the complex result, or None where the kernel hands over to CPython.
PyObject* py_cfunc(PyObject*, PyObject* args) {
  const char* name;
  Py_complex a, b;
  if (!PyArg_ParseTuple(args, "sDD", &name, &a, &b)) return nullptr;
  for (int f = 0; f < backends::cpu::kCFnCount; f++)
    if (std::string(name) == backends::cpu::cfn_name(static_cast<backends::cpu::CFn>(f))) {
      double out[2];
      if (!stagepy_cfunc(f, a.real, a.imag, b.real, b.imag, out)) Py_RETURN_NONE;
      return PyComplex_FromDoubles(out[0], out[1]);
    }
  return PyErr_Format(PyExc_ValueError, "unknown complex function %s", name);
}

PyObject* py_set_debug_bail(PyObject*, PyObject* n) {
  long long v = PyLong_AsLongLong(n);
  if (v == -1 && PyErr_Occurred()) return nullptr;
  set_debug_bail(v);
  Py_RETURN_NONE;
}

PyObject* py_set_helper_info(PyObject*, PyObject* fn) {
  set_helper_info_fn(fn == Py_None ? nullptr : fn);
  Py_RETURN_NONE;
}

PyObject* py_threads(PyObject*, PyObject* args) {
  long n = -1;
  if (!PyArg_ParseTuple(args, "|l", &n)) return nullptr;
  if (n >= 0) backends::cpu::set_threads((int)n);
  return PyLong_FromLong(backends::cpu::default_threads());
}

PyObject* py_thread_info(PyObject*, PyObject*) {
  const backends::cpu::Contention c = backends::cpu::contention();
  return Py_BuildValue("{s:l,s:K,s:K}", "threads", (long)backends::cpu::default_threads(), "late_regions",
                       (unsigned long long)c.late_regions, "on_caller_regions", (unsigned long long)c.on_caller_regions);
}

PyObject* py_min_parallel_cost(PyObject*, PyObject* args) {
  long long n = -1;
  if (!PyArg_ParseTuple(args, "|L", &n)) return nullptr;
  int64_t* c = backends::cpu::min_parallel_cost_address();
  if (n >= 0) *c = n;
  return PyLong_FromLongLong(*c);
}

PyObject* py_force_contended(PyObject*, PyObject* arg) {
  const double s = PyFloat_AsDouble(arg);
  if (s == -1.0 && PyErr_Occurred()) return nullptr;
  backends::cpu::force_contended(s);
  Py_RETURN_NONE;
}

PyObject* py_strict_fp(PyObject*, PyObject* args) {
  int on = -1;
  if (!PyArg_ParseTuple(args, "|i", &on)) return nullptr;
  if (on >= 0) set_strict_fp(on != 0);
  return PyBool_FromLong(strict_fp());
}

PyObject* py_oracle_lookup(PyObject*, PyObject* args) {
  const char *kind, *op;
  int a, b;
  if (!PyArg_ParseTuple(args, "ssii", &kind, &op, &a, &b)) return nullptr;
  const auto& o = oracle();
  TypeRef ta = specialize::sk_type(a), tb = b >= 0 ? specialize::sk_type(b) : nullptr;
  if (!ta) Py_RETURN_NONE;
  TypeRef r;
  std::string k = kind;
  static const char* bins[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@"};
  if (k == "bin") {
    for (int i = 0; i < 13; i++)
      if (std::string(op) == bins[i] && tb) r = o.binary(static_cast<ir::BinOp>(i), ta, tb);
  } else if (k == "cmp" && tb) {
    r = o.compare(ta, tb);
  }
  if (!r) Py_RETURN_NONE;
  return PyUnicode_FromString(specialize::sk_name(specialize::sk_index(*r)));
}

// wait_tier_ups(timeout): waits (without the GIL) until no background compile is pending.
PyObject* py_wait_tier_ups(PyObject*, PyObject* args) {
  double timeout = 60.0;
  int at_exit = 0;
  if (!PyArg_ParseTuple(args, "|dp", &timeout, &at_exit)) return nullptr;
  bool done;
  Py_BEGIN_ALLOW_THREADS done = backends::cpu::wait_tier_ups(timeout, at_exit != 0);
  Py_END_ALLOW_THREADS return PyBool_FromLong(done);
}

PyObject* py_cache_dir(PyObject*, PyObject*) {
  const std::string d = backends::cpu::cache_dir();
  if (d.empty()) Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(d.c_str());
}

PyMethodDef methods[] = {
    {"wait_tier_ups", py_wait_tier_ups, METH_VARARGS,
     "wait_tier_ups([timeout, at_exit]): waits for the background compiles (tier-up); True if none is left."},
    {"_run_dot", py_run_dot, METH_VARARGS, "NumPy's dot function as kernels call it (self-test)."},
    {"nest_records", py_nest_records, METH_NOARGS, "One dict per loop nest that ran."},
    {"nest_records_dropped", py_nest_records_dropped, METH_NOARGS,
     "Records of nests whose code objects went that the report no longer keeps."},
    {"scratch_bytes", py_scratch_bytes, METH_NOARGS, "Bytes held by this thread's kernel scratch buffers."},
    {"set_oracle_entries", py_set_oracle_entries, METH_VARARGS, "Types of NumPy operations, probed."},
    {"register_callable", py_register_callable, METH_VARARGS, "A function stagepy knows by identity."},
    {"register_twin", py_register_twin, METH_VARARGS, "A C function nests inline as a Python function."},
    {"register_numpy_random", py_register_numpy_random, METH_VARARGS, "Kernels draw from np.random's generator."},
    {"register_random", py_register_random, METH_VARARGS, "Kernels draw from the random module's generator."},
    {"_oracle_lookup", py_oracle_lookup, METH_VARARGS, "Tests only: the oracle's answer."},
    {"_cfunc", py_cfunc, METH_VARARGS, "Tests only: a complex function as kernels compute it."},
    {"_hypot", py_hypot, METH_VARARGS, "Tests only: math.hypot as kernels compute it."},
    {"_set_debug_bail", py_set_debug_bail, METH_O, "Tests only: force hand-overs to CPython (see support/debug.h)."},
    {"_ufunc_loop", py_ufunc_loop, METH_VARARGS, "Register, run or drop NumPy's inner loop of a ufunc."},
    {"_resume_iters", resume_iters, METH_NOARGS, "Iterators for the resume just requested (bytecode only)."},
    {"kernel_stats", kernel_stats, METH_NOARGS, "Kernels loaded now, evicted so far, and the limit."},
    {"set_helper_info", py_set_helper_info, METH_O, "The function giving a helper's bytecode for inlining."},
    {"cache_dir", py_cache_dir, METH_NOARGS, "The disk cache's folder, or None when it is off (STAGEPY_CACHE=0)."},
    {"threads", py_threads, METH_VARARGS, "threads([n]): the threads parallel loops use (n: set; 0: default)."},
    {"thread_info", py_thread_info, METH_NOARGS,
     "The threads, and the parallel regions that found a thread starting late (busy cores) or ran on the caller."},
    {"_force_contended", py_force_contended, METH_O, "Tests only: parallel regions run on the caller for s seconds."},
    {"min_parallel_cost", py_min_parallel_cost, METH_VARARGS,
     "min_parallel_cost([n]): the least work (cost units) a parallel region runs on threads with (n: set)."},
    {"strict_fp", py_strict_fp, METH_VARARGS,
     "strict_fp([on]): whether float reductions keep CPython's order (on: set; STAGEPY_STRICT_FP until then)."},
    {"isl_info", py_isl_info, METH_NOARGS, "Which isl the core is bound to."},
    {"gpu_info", py_gpu_info, METH_NOARGS, "The GPU: whether kernels use one, the device, transfers so far."},
    {"set_target", py_set_target, METH_O, "set_target('cpu'|'gpu'|'auto'): where parallel loops may run."},
    {"llvm_version", py_llvm_version, METH_NOARGS, "Major version of the LLVM the core uses."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

int add_to_module(PyObject* module) {
  if (add_nest_types(module) < 0) return -1;
  return PyModule_AddFunctions(module, methods);
}

}  // namespace stagepy::runtime
