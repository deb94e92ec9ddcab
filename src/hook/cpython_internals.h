// CPython 3.11-3.13 internals used by src/hook, behind one set of version-neutral macros.
// Only this header includes the internal headers; see ../shared/design/pep523.md.
#pragma once

#define Py_BUILD_CORE 1
#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0400 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
#define STAGEPY_HOOK_SUPPORTED 1
#else
#define STAGEPY_HOOK_SUPPORTED 0
#endif

#if STAGEPY_HOOK_SUPPORTED
#if PY_VERSION_HEX >= 0x030C0000
#undef _PyGC_FINALIZED  // gh-105268
#endif
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#if PY_VERSION_HEX >= 0x030D0000
#include <internal/pycore_function.h>  // _PyFunction_SetVersion
// LOAD_ATTR's method lookup (exported; declared in internal/pycore_object.h from 3.13, in
// cpython/object.h before): the class's function, where no instance attribute shadows it,
// without making a bound method.
extern "C" PyAPI_FUNC(int) _PyObject_GetMethod(PyObject* obj, PyObject* name, PyObject** method);
#endif

namespace stagepy::cpy {

using Frame = _PyInterpreterFrame;

// The word CPython's C signal handler sets when a signal arrives (cleared once the
// interpreter has run the Python-level handlers). In signal_flag.c: the runtime's
// headers only compile as C (3.11's pycore_atomic.h).
extern "C" const volatile int* stagepy_signal_flag(void);
inline const volatile int* signal_flag() { return stagepy_signal_flag(); }

#if PY_VERSION_HEX >= 0x030D0000
inline PyCodeObject* frame_code(Frame* f) {
  return PyCode_Check(f->f_executable) ? (PyCodeObject*)f->f_executable : nullptr;
}
inline void frame_set_code(Frame* f, PyCodeObject* c) { f->f_executable = (PyObject*)c; }
inline PyObject* frame_func(Frame* f) { return f->f_funcobj; }
inline bool frame_is_fresh(Frame* f) {
  return f->instr_ptr == _PyCode_CODE(frame_code(f)) && f->frame_obj == nullptr;
}
inline void frame_reset_ip(Frame* f) { f->instr_ptr = _PyCode_CODE(frame_code(f)); }
// Makes the frame's "current instruction" the one at code unit `index`.
inline void frame_set_ip(Frame* f, int index) { f->instr_ptr = _PyCode_CODE(frame_code(f)) + index; }
inline Frame* current_frame(PyThreadState* ts) { return ts->current_frame; }
inline int frame_slots(PyCodeObject* co) { return co->co_framesize; }
#else
inline PyCodeObject* frame_code(Frame* f) { return f->f_code; }
inline void frame_set_code(Frame* f, PyCodeObject* c) { f->f_code = c; }
#if PY_VERSION_HEX >= 0x030C0000
inline PyObject* frame_func(Frame* f) { return f->f_funcobj; }
inline int frame_slots(PyCodeObject* co) { return co->co_framesize; }
#else
inline PyObject* frame_func(Frame* f) { return (PyObject*)f->f_func; }
inline int frame_slots(PyCodeObject* co) {
  return co->co_nlocalsplus + co->co_stacksize + FRAME_SPECIALS_SIZE;
}
#endif
inline bool frame_is_fresh(Frame* f) {
  return f->prev_instr == _PyCode_CODE(f->f_code) - 1 && f->frame_obj == nullptr;
}
inline void frame_reset_ip(Frame* f) { f->prev_instr = _PyCode_CODE(f->f_code) - 1; }
// prev_instr is what tracebacks read as "the last instruction" of the frame.
inline void frame_set_ip(Frame* f, int index) { f->prev_instr = _PyCode_CODE(f->f_code) + index; }
inline Frame* current_frame(PyThreadState* ts) { return ts->cframe->current_frame; }
#endif

inline bool frame_owned_by_thread(Frame* f) { return f->owner == FRAME_OWNED_BY_THREAD; }

// co_extra read without the API call. The struct is private to codeobject.c; this is
// its layout, the same in 3.11-3.13 (pep523.md section 7).
struct CodeExtra {
  Py_ssize_t ce_size;
  void* ce_extras[1];
};
inline void* code_extra(PyCodeObject* co, Py_ssize_t index) {
  auto* ex = (CodeExtra*)co->co_extra;
  if (ex == nullptr || index >= ex->ce_size) return nullptr;
  return ex->ce_extras[index];
}

#if PY_VERSION_HEX >= 0x030C0000
inline Py_ssize_t request_extra_index(freefunc f) { return PyUnstable_Eval_RequestCodeExtraIndex(f); }
inline int set_code_extra(PyObject* co, Py_ssize_t i, void* v) { return PyUnstable_Code_SetExtra(co, i, v); }
#else
inline Py_ssize_t request_extra_index(freefunc f) { return _PyEval_RequestCodeExtraIndex(f); }
inline int set_code_extra(PyObject* co, Py_ssize_t i, void* v) { return _PyCode_SetExtra(co, i, v); }
#endif

}  // namespace stagepy::cpy
#endif  // STAGEPY_HOOK_SUPPORTED
