// A second, trivial PEP 523 hook, only for the test suite: it counts frames and chains
// to whatever was installed before it, so tests can check that stagepy chains to a hook
// installed earlier and notices one installed later.
#include "hook/testing_hook.h"

#include "hook/cpython_internals.h"

namespace stagepy::testing_hook {

#if STAGEPY_HOOK_SUPPORTED
namespace {
_PyFrameEvalFunction g_prev = nullptr;
unsigned long long g_frames = 0;
bool g_installed = false;

PyObject* counting_eval(PyThreadState* ts, cpy::Frame* f, int throwflag) {
  g_frames++;
  return g_prev ? g_prev(ts, f, throwflag) : _PyEval_EvalFrameDefault(ts, f, throwflag);
}
}  // namespace

PyObject* install(PyObject*, PyObject*) {
  if (!g_installed) {
    PyInterpreterState* interp = PyInterpreterState_Get();
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);
    g_prev = cur == _PyEval_EvalFrameDefault ? nullptr : cur;
    _PyInterpreterState_SetEvalFrameFunc(interp, counting_eval);
    g_installed = true;
  }
  Py_RETURN_NONE;
}

PyObject* uninstall(PyObject*, PyObject*) {
  if (g_installed) {
    PyInterpreterState* interp = PyInterpreterState_Get();
    if (_PyInterpreterState_GetEvalFrameFunc(interp) == counting_eval)
      _PyInterpreterState_SetEvalFrameFunc(interp, g_prev ? g_prev : _PyEval_EvalFrameDefault);
    g_installed = false;
  }
  Py_RETURN_NONE;
}

PyObject* frames(PyObject*, PyObject*) { return PyLong_FromUnsignedLongLong(g_frames); }
#else
PyObject* install(PyObject*, PyObject*) { Py_RETURN_NONE; }
PyObject* uninstall(PyObject*, PyObject*) { Py_RETURN_NONE; }
PyObject* frames(PyObject*, PyObject*) { return PyLong_FromLong(0); }
#endif

}  // namespace stagepy::testing_hook
