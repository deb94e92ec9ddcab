// stagepy._core: the CPython extension module. Python calls in, the hook and the
// runtime come out; no logic lives here beyond argument conversion.
#include <Python.h>

#include "hook/cpython_internals.h"
#include "hook/eval_hook.h"
#include "hook/runtime_module.h"
#include "hook/testing_hook.h"
#include "support/debug.h"
#include "support/version.h"

namespace {

using namespace stagepy;

PyObject* py_enable(PyObject*, PyObject*) {
  if (hook::enable() < 0) return nullptr;
  Py_RETURN_NONE;
}

PyObject* py_disable(PyObject*, PyObject*) {
  if (hook::disable() < 0) return nullptr;
  Py_RETURN_NONE;
}

PyObject* py_enabled(PyObject*, PyObject*) { return PyBool_FromLong(hook::enabled()); }
PyObject* py_armed(PyObject*, PyObject*) { return PyBool_FromLong(hook::armed()); }

PyObject* py_set_resolver(PyObject*, PyObject* args, PyObject* kw) {
  static const char* names[] = {"resolver", "prefilter", nullptr};
  PyObject* fn;
  int prefilter = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p", const_cast<char**>(names), &fn, &prefilter))
    return nullptr;
  hook::set_resolver(fn == Py_None ? nullptr : fn, prefilter);
  Py_RETURN_NONE;
}

PyObject* py_set_user_file(PyObject*, PyObject* fn) {
  hook::set_user_file(fn == Py_None ? nullptr : fn);
  Py_RETURN_NONE;
}

PyObject* py_set_sweeper(PyObject*, PyObject* fn) {
  hook::set_sweeper(fn == Py_None ? nullptr : fn);
  Py_RETURN_NONE;
}

bool check_code(PyObject* o) {
  if (PyCode_Check(o)) return true;
  PyErr_SetString(PyExc_TypeError, "expected a code object");
  return false;
}

PyObject* py_decision(PyObject*, PyObject* code) {
  if (!check_code(code)) return nullptr;
  PyObject* d = hook::decision(code);
  if (d == nullptr && !PyErr_Occurred()) return PyUnicode_FromString("undecided");
  return d;
}

PyObject* py_decide(PyObject*, PyObject* code) {
  if (!check_code(code)) return nullptr;
  return hook::decide(code);
}

PyObject* py_has_candidates(PyObject*, PyObject* code) {
  if (!check_code(code)) return nullptr;
  return PyBool_FromLong(hook::has_candidates(code));
}

PyObject* py_retarget(PyObject*, PyObject* func) {
  return PyBool_FromLong(hook::retarget(func));
}

PyObject* py_set_quiet_threshold(PyObject*, PyObject* n) {
  long v = PyLong_AsLong(n);
  if (v == -1 && PyErr_Occurred()) return nullptr;
  hook::set_quiet_threshold(v);
  Py_RETURN_NONE;
}

PyObject* py_set_max_hook_depth(PyObject*, PyObject* n) {
  long v = PyLong_AsLong(n);
  if (v == -1 && PyErr_Occurred()) return nullptr;
  hook::set_max_hook_depth((int)v);
  Py_RETURN_NONE;
}

PyObject* py_rearm(PyObject*, PyObject*) {
  hook::request_rearm("requested");
  Py_RETURN_NONE;
}

PyObject* py_hook_stats(PyObject*, PyObject*) { return hook::stats(); }

PyMethodDef methods[] = {
    {"enable", py_enable, METH_NOARGS, "Install the frame-evaluation hook."},
    {"disable", py_disable, METH_NOARGS, "Remove the frame-evaluation hook."},
    {"enabled", py_enabled, METH_NOARGS, "Whether discovery is enabled."},
    {"armed", py_armed, METH_NOARGS, "Whether the hook is installed right now."},
    {"set_resolver", (PyCFunction)(void (*)())py_set_resolver, METH_VARARGS | METH_KEYWORDS, "Set the code-object resolver."},
    {"set_user_file", py_set_user_file, METH_O, "Set the predicate: are a file's loops the user's (reported)?"},
    {"set_sweeper", py_set_sweeper, METH_O, "Set the function sweeper run before stepping aside."},
    {"decision", py_decision, METH_O, "The cached decision for a code object."},
    {"decide", py_decide, METH_O, "Decide a code object now; returns its replacement or None."},
    {"has_candidates", py_has_candidates, METH_O, "Whether the prefilter sends this code to the resolver."},
    {"retarget", py_retarget, METH_O, "Point a function at its code's replacement, if any."},
    {"set_quiet_threshold", py_set_quiet_threshold, METH_O, "Frames before the hook steps aside."},
    {"set_max_hook_depth", py_set_max_hook_depth, METH_O, "Hooked C-stack depth before stepping aside."},
    {"rearm", py_rearm, METH_NOARGS, "Re-install the hook if enabled."},
    {"hook_stats", py_hook_stats, METH_NOARGS, "Counters of the hook."},
    {"_testing_foreign_hook_install", testing_hook::install, METH_NOARGS, "Tests only."},
    {"_testing_foreign_hook_uninstall", testing_hook::uninstall, METH_NOARGS, "Tests only."},
    {"_testing_foreign_hook_frames", testing_hook::frames, METH_NOARGS, "Tests only."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "stagepy._core", "stagepy native core", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__core(void) {
  PyObject* m = PyModule_Create(&moduledef);
  if (!m) return nullptr;
#if STAGEPY_HOOK_SUPPORTED
  stagepy::set_interrupt_flag(stagepy::cpy::signal_flag());
#endif
  if (PyModule_AddObject(m, "HOOK_SUPPORTED", PyBool_FromLong(hook::supported())) < 0 ||
      PyModule_AddStringConstant(m, "UNSUPPORTED_REASON", hook::unsupported_reason()) < 0 ||
      PyModule_AddStringConstant(m, "CORE_VERSION", stagepy::core_version()) < 0 ||
      stagepy::runtime::add_to_module(m) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
