/* The address of CPython's "a signal is pending" word, for kernels to poll (see
   cpython_internals.h). C, not C++: 3.11's internal atomics header is C-only. */
#define Py_BUILD_CORE 1
#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0400 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
#include <internal/pycore_runtime.h>

const volatile int* stagepy_signal_flag(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return (const volatile int*)&_PyRuntime.signals.is_tripped;
#else
  return (const volatile int*)&_PyRuntime.ceval.signals_pending;
#endif
}
#else
const volatile int* stagepy_signal_flag(void) { return 0; }
#endif
