// The PEP 523 hook (see eval_hook.h for what goes in and out).
//
// Per frame: generator/coroutine re-entries and throw()/close() pass through untouched.
// Otherwise the code object's decision is read from co_extra (NULL = not seen yet,
// SKIP = run as is, a code object = run that instead). A replacement is swapped into
// the fresh frame in place (pep523.md section 4) and the frame goes to the evaluator
// that was installed before us.
#include "hook/eval_hook.h"

#include <cstring>
#include <string>
#include <vector>

#include "hook/cpython_internals.h"
#include "hook/py_ref.h"
#include <opcode.h>

namespace stagepy::hook {

#if !STAGEPY_HOOK_SUPPORTED

bool supported() { return false; }
const char* unsupported_reason() {
  return "stagepy supports CPython 3.11.4 to 3.13 with the GIL; this interpreter is not one of them";
}
int enable() { return 0; }
int disable() { return 0; }
bool enabled() { return false; }
bool armed() { return false; }
void set_resolver(PyObject*, bool) {}
void set_user_file(PyObject*) {}
void set_sweeper(PyObject*) {}
PyObject* decision(PyObject*) { return nullptr; }
PyObject* decide(PyObject*) { Py_RETURN_NONE; }
bool has_candidates(PyObject*) { return false; }
int retarget(PyObject*) { return 0; }
void set_quiet_threshold(long) {}
void set_max_hook_depth(int) {}
void request_rearm(const char*) {}
PyObject* stats() { return PyDict_New(); }

#else

namespace {

using cpy::Frame;

char kSkipMark;
void* const kSkip = &kSkipMark;  // co_extra value: decided, nothing to replace

struct State {
  Py_ssize_t extra_index = -1;
  bool enabled = false;        // the user asked for discovery
  bool armed = false;          // our function is the interpreter's eval function now
  bool foreign_after = false;  // someone installed an eval function after us
  _PyFrameEvalFunction prev = nullptr;  // evaluator we chain to (NULL: the default)
  PyInterpreterState* interp = nullptr;
  PyObject* resolver = nullptr;  // strong
  bool prefilter = true;         // only send prefiltered code to the resolver
  PyObject* user_file = nullptr; // strong: filename -> whether its loops are the user's
  PyObject* user_files = nullptr;  // strong dict: its answers so far
  PyObject* sweeper = nullptr;   // strong
  bool audit_installed = false;
  int func_watcher = -1;

  long quiet = 0;                 // consecutive hooked frames that were already decided
  long quiet_threshold = 2000;    // steps aside after this many (doubles per re-arm)
  int max_depth = 100;            // hooked frames on one C stack before stepping aside

  // Counters for the report.
  unsigned long long frames = 0, swaps = 0, resolved = 0, replaced = 0, step_asides = 0,
                     rearms = 0, deep_step_asides = 0, sweeps = 0;
  std::vector<std::string> errors;
  std::string last_rearm;
};
State g;

thread_local int t_busy = 0;         // inside one of our own callbacks
thread_local int t_depth = 0;        // hooked frames on this thread's C stack
thread_local int t_aside_depth = 0;  // depth at which this thread stepped aside

PyObject* stagepy_eval_frame(PyThreadState* ts, Frame* f, int throwflag);

inline PyObject* eval_prev(PyThreadState* ts, Frame* f, int throwflag) {
  return g.prev ? g.prev(ts, f, throwflag) : _PyEval_EvalFrameDefault(ts, f, throwflag);
}

void record_error(std::string msg) {
  if (g.errors.size() < 100) g.errors.push_back(std::move(msg));
}

std::string describe_code(PyCodeObject* co) {
  const char* file = PyUnicode_AsUTF8(co->co_filename);
  const char* name = PyUnicode_AsUTF8(co->co_name);
  if (!file || !name) { PyErr_Clear(); return "<code>"; }
  return std::string(name) + " (" + file + ":" + std::to_string(co->co_firstlineno) + ")";
}

// Records the pending Python exception (if any) under `what`, and clears it.
void record_pending(const std::string& what) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  PyRef value = PyRef::steal(v), type = PyRef::steal(t), trace = PyRef::steal(tb);
  std::string text = what;
  if (value) {
    PyRef s = PyRef::steal(PyObject_Repr(value.get()));
    const char* c = s ? PyUnicode_AsUTF8(s.get()) : nullptr;
    text += ": ";
    text += c ? c : "<unprintable exception>";
  }
  PyErr_Clear();
  record_error(std::move(text));
}

void free_extra(void* p) {
  if (p != nullptr && p != kSkip) Py_DECREF((PyObject*)p);
}

inline void* read_decision(PyCodeObject* co) { return cpy::code_extra(co, g.extra_index); }

void store_decision(PyCodeObject* co, void* d) {
  if (cpy::set_code_extra((PyObject*)co, g.extra_index, d) < 0) {
    record_pending("co_extra for " + describe_code(co));
    if (d != kSkip) Py_DECREF((PyObject*)d);
  }
}

inline bool is_generator_like(PyCodeObject* co) {
  return co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE);
}

bool same_object_value(PyObject* a, PyObject* b) {
  int r = PyObject_RichCompareBool(a, b, Py_EQ);
  if (r < 0) { PyErr_Clear(); return false; }
  return r == 1;
}

// A replacement can take over a frame laid out for `orig` (pep523.md section 4).
std::string incompatibility(PyCodeObject* orig, PyCodeObject* repl) {
  const int kFlags = CO_OPTIMIZED | CO_NEWLOCALS | CO_VARARGS | CO_VARKEYWORDS | CO_GENERATOR |
                     CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE;
  if ((orig->co_flags & kFlags) != (repl->co_flags & kFlags)) return "different code flags";
  if (orig->co_argcount != repl->co_argcount || orig->co_posonlyargcount != repl->co_posonlyargcount ||
      orig->co_kwonlyargcount != repl->co_kwonlyargcount)
    return "different argument counts";
  int nargs = orig->co_argcount + orig->co_kwonlyargcount + !!(orig->co_flags & CO_VARARGS) +
              !!(orig->co_flags & CO_VARKEYWORDS);
  for (int i = 0; i < nargs; i++) {
    if (!same_object_value(PyTuple_GET_ITEM(orig->co_localsplusnames, i),
                           PyTuple_GET_ITEM(repl->co_localsplusnames, i)))
      return "different argument names";
  }
  PyRef of = PyRef::steal(PyCode_GetFreevars(orig)), rf = PyRef::steal(PyCode_GetFreevars(repl));
  if (!of || !rf) { PyErr_Clear(); return "free variables unreadable"; }
  if (!same_object_value(of.get(), rf.get())) return "different free variables";
  return "";
}

// Whether loops in code from this file are the user's (the report lists them even when
// they stay interpreted); asks the Python predicate once per file name.
bool user_file(PyObject* filename) {
  if (!g.user_file || !filename) return false;
  if (!g.user_files && !(g.user_files = PyDict_New())) {
    PyErr_Clear();
    return false;
  }
  PyObject* known = PyDict_GetItemWithError(g.user_files, filename);  // borrowed
  if (known) return known == Py_True;
  PyErr_Clear();
  t_busy++;  // the predicate's own frames (os.path's loops) are not resolved meanwhile
  PyRef r = PyRef::steal(PyObject_CallOneArg(g.user_file, filename));
  t_busy--;
  int yes = r ? PyObject_IsTrue(r.get()) : -1;
  if (yes < 0) {
    PyErr_Clear();
    yes = 0;
  }
  if (PyDict_SetItem(g.user_files, filename, yes ? Py_True : Py_False) < 0) PyErr_Clear();
  return yes == 1;
}

// A backward jump: the end of a loop, `while` loops included (3.11 also has conditional ones).
bool backward_jump(int op) {
  switch (op) {
    case JUMP_BACKWARD:
#ifdef POP_JUMP_BACKWARD_IF_TRUE
    case POP_JUMP_BACKWARD_IF_TRUE: case POP_JUMP_BACKWARD_IF_FALSE:
    case POP_JUMP_BACKWARD_IF_NONE: case POP_JUMP_BACKWARD_IF_NOT_NONE:
#endif
      return true;
    default:
      return false;
  }
}

// Bytecode prefilter: only code with a `for` loop that may be over range(), or with any
// loop (`for` or `while`) in the user's files (reported with the reason it stays
// interpreted), or code holding such code in its constants, goes to the (Python) resolver.
bool scan_candidates(PyCodeObject* co, int depth) {
  if (depth > 64) return false;
  bool names_range = false;
  PyObject* names = co->co_names;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
    PyObject* n = PyTuple_GET_ITEM(names, i);
    if (PyUnicode_Check(n) && PyUnicode_CompareWithASCIIString(n, "range") == 0) { names_range = true; break; }
  }
  if (names_range || g.user_file) {
    PyRef bytes = PyRef::steal(PyCode_GetCode(co));  // de-specialized copy
    if (!bytes) { PyErr_Clear(); return false; }
    const unsigned char* c = (const unsigned char*)PyBytes_AS_STRING(bytes.get());
    Py_ssize_t n = PyBytes_GET_SIZE(bytes.get());
    bool any_loop = false;
    for (Py_ssize_t i = 0; i + 1 < n; i += 2) {
      if (c[i] != FOR_ITER) {
        any_loop = any_loop || (g.user_file && backward_jump(c[i]));
        continue;
      }
      if (names_range) return true;
      any_loop = any_loop || (i >= 2 && c[i - 2] == GET_ITER);
    }
    if (any_loop && user_file(co->co_filename)) return true;
  }
  PyObject* consts = co->co_consts;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); i++) {
    PyObject* k = PyTuple_GET_ITEM(consts, i);
    if (PyCode_Check(k) && scan_candidates((PyCodeObject*)k, depth + 1)) return true;
  }
  return false;
}

// Runs the resolver for `co` and caches the decision. Returns the decision.
void* resolve(PyCodeObject* co) {
  void* d = read_decision(co);
  if (d != nullptr) return d;
  g.resolved++;
  d = kSkip;
  if (g.resolver && (!g.prefilter || scan_candidates(co, 0))) {
    t_busy++;
    PyRef r = PyRef::steal(PyObject_CallOneArg(g.resolver, (PyObject*)co));
    t_busy--;
    if (!r) {
      record_pending("resolver failed for " + describe_code(co));
    } else if (r.get() != Py_None) {
      if (!PyCode_Check(r.get())) {
        record_error("resolver returned a non-code object for " + describe_code(co));
      } else {
        std::string why = incompatibility(co, (PyCodeObject*)r.get());
        if (!why.empty()) {
          record_error("replacement for " + describe_code(co) + " rejected: " + why);
        } else if (r.get() != (PyObject*)co) {
          auto* repl = (PyCodeObject*)r.get();
          if (read_decision(repl) == nullptr) store_decision(repl, kSkip);  // run as is
          d = r.release();
          g.replaced++;
        }
      }
    }
  }
  // Someone may have decided `co` while the resolver ran (re-entrancy through decide()).
  void* again = read_decision(co);
  if (again != nullptr) {
    free_extra(d);
    return again;
  }
  store_decision(co, d);
  return read_decision(co) ? read_decision(co) : kSkip;
}

// ---------------------------------------------------------------- arming

_PyFrameEvalFunction current_eval() { return _PyInterpreterState_GetEvalFrameFunc(g.interp); }

bool install_ours() {
  _PyFrameEvalFunction cur = current_eval();
  if (cur == stagepy_eval_frame) return true;
  // _PyEval_EvalFrameDefault reads back as itself when nothing is installed.
  _PyFrameEvalFunction prev_as_read = g.prev ? g.prev : _PyEval_EvalFrameDefault;
  if (cur != prev_as_read) {
    g.foreign_after = true;
    return false;
  }
  _PyInterpreterState_SetEvalFrameFunc(g.interp, stagepy_eval_frame);
  return true;
}

bool remove_ours() {
  if (current_eval() != stagepy_eval_frame) {
    g.foreign_after = true;
    return false;
  }
  _PyInterpreterState_SetEvalFrameFunc(g.interp, g.prev ? g.prev : _PyEval_EvalFrameDefault);
  return true;
}

void rearm(const char* why) {
  if (!g.enabled || g.armed) return;
  if (PyInterpreterState_Get() != g.interp) return;
  if (install_ours()) {
    g.armed = true;
    g.rearms++;
    g.last_rearm = why;
    g.quiet = 0;
    if (g.quiet_threshold < (1L << 20)) g.quiet_threshold *= 2;
  }
}

void step_aside_quiet() {
  g.quiet = 0;
  if (g.sweeper) {
    t_busy++;
    PyRef ok = PyRef::steal(PyObject_CallNoArgs(g.sweeper));
    t_busy--;
    g.sweeps++;
    if (!ok) {
      record_pending("sweep before stepping aside");
      if (g.quiet_threshold < (1L << 20)) g.quiet_threshold *= 2;
      return;
    }
    if (!PyObject_IsTrue(ok.get())) {
      PyErr_Clear();
      if (g.quiet_threshold < (1L << 20)) g.quiet_threshold *= 2;
      return;
    }
  }
  if (g.armed && remove_ours()) {
    g.armed = false;
    g.step_asides++;
  }
}

// The audit hook re-arms discovery when new code can appear.
int audit_hook(const char* event, PyObject* args, void*) {
  if (!g.enabled || g.armed || t_busy) return 0;
  switch (event[0]) {
    case 'c':
      if (!strcmp(event, "compile") || !strcmp(event, "code.__new__")) rearm(event);
      break;
    case 'e':
      if (!strcmp(event, "exec")) rearm(event);
      break;
    case 'm':
      if (!strncmp(event, "marshal.load", 12)) rearm(event);
      break;
    case 'f':
      if (!strcmp(event, "function.__new__")) rearm(event);
      break;
    case 'o':
      if (!strcmp(event, "object.__setattr__") && PyTuple_Check(args) && PyTuple_GET_SIZE(args) >= 2) {
        PyObject* name = PyTuple_GET_ITEM(args, 1);
        if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__code__") == 0)
          rearm("__code__ assignment");
      }
      break;
  }
  return 0;
}

#if PY_VERSION_HEX >= 0x030C0000
// Functions made from code objects the hook has not decided (or decided to replace)
// need the hook for their first call.
int func_watcher(PyFunction_WatchEvent event, PyFunctionObject* func, PyObject* new_value) {
  if (!g.enabled || g.armed || t_busy) return 0;
  PyObject* code = nullptr;
  if (event == PyFunction_EVENT_CREATE) code = func->func_code;
  else if (event == PyFunction_EVENT_MODIFY_CODE) code = new_value;
  if (code && PyCode_Check(code)) {
    void* d = read_decision((PyCodeObject*)code);
    if (d != kSkip) rearm("function created");
  }
  return 0;
}
#endif

// ---------------------------------------------------------------- the hook

// Swaps `repl` into the fresh frame `f` (pep523.md section 4). False if it cannot.
bool swap_code(PyThreadState* ts, Frame* f, PyCodeObject* orig, PyCodeObject* repl) {
  int old_slots = cpy::frame_slots(orig), new_slots = cpy::frame_slots(repl);
  if (new_slots != old_slots) {
    PyObject** top = (PyObject**)f + old_slots;
    if (ts->datastack_top != top) return false;
    if (new_slots > old_slots && new_slots - old_slots >= ts->datastack_limit - ts->datastack_top)
      return false;
    ts->datastack_top = (PyObject**)f + new_slots;
  }
  for (int i = orig->co_nlocalsplus; i < repl->co_nlocalsplus; i++) f->localsplus[i] = nullptr;
  Py_INCREF(repl);
  cpy::frame_set_code(f, repl);  // the frame's reference to `orig` is now ours
  cpy::frame_reset_ip(f);
  f->stacktop = repl->co_nlocalsplus;
  return true;
}

// Points the function object at its replacement, so later calls need no swap.
bool retarget_function(PyObject* func, PyCodeObject* orig, PyCodeObject* repl) {
  if (!func || !PyFunction_Check(func)) return false;
  if (((PyFunctionObject*)func)->func_code != (PyObject*)orig) return false;
  SavedError saved;
  t_busy++;
  int rc = PyObject_SetAttrString(func, "__code__", (PyObject*)repl);
  t_busy--;
  if (rc < 0) {
    record_pending("setting __code__ of " + describe_code(orig));
    return false;
  }
#if PY_VERSION_HEX >= 0x030D0000
  // 3.13 clears the version of a function whose __code__ is assigned, which would stop
  // the specializer from inlining calls to it; give it the version PyFunction_New gives.
  _PyFunction_SetVersion((PyFunctionObject*)func, repl->co_version);
#endif
  return true;
}

inline PyObject* eval_counted(PyThreadState* ts, Frame* f) {
  if (++t_depth > g.max_depth && g.armed && t_aside_depth == 0) {
    // Deep recursion through the hook would cost C stack on every level (and hits
    // 3.12's C recursion cap): step aside so the interpreter inlines the deeper calls.
    if (remove_ours()) {
      g.armed = false;
      g.deep_step_asides++;
      t_aside_depth = t_depth;
    }
  }
  PyObject* res = eval_prev(ts, f, 0);
  if (t_aside_depth == t_depth) {
    t_aside_depth = 0;
    rearm("recursion unwound");
  }
  --t_depth;
  return res;
}

PyObject* stagepy_eval_frame(PyThreadState* ts, Frame* f, int throwflag) {
  if (throwflag || !cpy::frame_owned_by_thread(f) || t_busy || ts->interp != g.interp)
    return eval_prev(ts, f, throwflag);
  PyCodeObject* co = cpy::frame_code(f);
  if (co == nullptr) return eval_prev(ts, f, throwflag);
  g.frames++;
  void* d = read_decision(co);
  if (d == nullptr) {
    SavedError saved;
    d = resolve(co);
    g.quiet = 0;
  } else if (++g.quiet >= g.quiet_threshold && g.armed) {
    SavedError saved;
    step_aside_quiet();
  }
  if (d == kSkip || is_generator_like(co) || !cpy::frame_is_fresh(f))
    return eval_counted(ts, f);

  auto* repl = (PyCodeObject*)d;
  if (!swap_code(ts, f, co, repl)) {
    record_error("could not swap the frame of " + describe_code(co));
    return eval_counted(ts, f);
  }
  g.swaps++;
  retarget_function(cpy::frame_func(f), co, repl);
  PyObject* res = eval_counted(ts, f);
  Py_DECREF(co);  // the frame's former reference
  return res;
}

}  // namespace

bool supported() { return true; }
const char* unsupported_reason() { return ""; }

int enable() {
  if (g.enabled) return 0;
  PyInterpreterState* interp = PyInterpreterState_Get();
  if (g.interp != nullptr && g.interp != interp) {
    PyErr_SetString(PyExc_RuntimeError, "stagepy is already enabled in another interpreter");
    return -1;
  }
  g.interp = interp;
  if (g.extra_index < 0) {
    g.extra_index = cpy::request_extra_index(free_extra);
    if (g.extra_index < 0) {
      PyErr_SetString(PyExc_RuntimeError, "no co_extra slot left for stagepy");
      return -1;
    }
  }
  if (!g.audit_installed) {
    if (PySys_AddAuditHook(audit_hook, nullptr) < 0) return -1;
    g.audit_installed = true;
  }
#if PY_VERSION_HEX >= 0x030C0000
  if (g.func_watcher < 0) {
    g.func_watcher = PyFunction_AddWatcher(func_watcher);
    if (g.func_watcher < 0) PyErr_Clear();  // only an optimisation: fall back to audit events
  }
#endif
  _PyFrameEvalFunction cur = current_eval();
  if (cur == stagepy_eval_frame) {  // left installed by a foreign hook's chaining
    g.enabled = true;
    g.armed = true;
    return 0;
  }
  g.prev = (cur == _PyEval_EvalFrameDefault) ? nullptr : cur;
  g.foreign_after = false;
  _PyInterpreterState_SetEvalFrameFunc(interp, stagepy_eval_frame);
  g.enabled = true;
  g.armed = true;
  g.quiet = 0;
  return 0;
}

int disable() {
  if (!g.enabled) return 0;
  g.enabled = false;
  if (g.armed) {
    remove_ours();  // leaves a foreign hook installed after us in place
    g.armed = false;
  }
  return 0;
}

bool enabled() { return g.enabled; }
bool armed() { return g.armed; }

void set_resolver(PyObject* callable, bool prefilter) {
  g.prefilter = prefilter;
  Py_XINCREF(callable);
  Py_XSETREF(g.resolver, callable);
}

void set_user_file(PyObject* callable) {
  Py_XINCREF(callable);
  Py_XSETREF(g.user_file, callable);
  Py_CLEAR(g.user_files);
}

void set_sweeper(PyObject* callable) {
  Py_XINCREF(callable);
  Py_XSETREF(g.sweeper, callable);
}

PyObject* decision(PyObject* code) {
  if (g.extra_index < 0) return nullptr;
  void* d = read_decision((PyCodeObject*)code);
  if (d == nullptr) return nullptr;
  if (d == kSkip) Py_RETURN_NONE;
  return Py_NewRef((PyObject*)d);
}

PyObject* decide(PyObject* code) {
  if (g.extra_index < 0) {
    g.extra_index = cpy::request_extra_index(free_extra);
    if (g.extra_index < 0) {
      PyErr_SetString(PyExc_RuntimeError, "no co_extra slot left for stagepy");
      return nullptr;
    }
  }
  void* d = resolve((PyCodeObject*)code);
  if (d == kSkip) Py_RETURN_NONE;
  return Py_NewRef((PyObject*)d);
}

bool has_candidates(PyObject* code) { return scan_candidates((PyCodeObject*)code, 0); }

int retarget(PyObject* func) {
  if (!PyFunction_Check(func)) return 0;
  auto* co = (PyCodeObject*)((PyFunctionObject*)func)->func_code;
  if (g.extra_index < 0 || is_generator_like(co)) return 0;
  void* d = resolve(co);
  if (d == kSkip) return 0;
  return retarget_function(func, co, (PyCodeObject*)d) ? 1 : 0;
}

void set_quiet_threshold(long n) { g.quiet_threshold = n < 1 ? 1 : n; }
void set_max_hook_depth(int n) { g.max_depth = n < 1 ? 1 : n; }
void request_rearm(const char* why) { rearm(why); }

PyObject* stats() {
  PyRef d = PyRef::steal(PyDict_New());
  if (!d) return nullptr;
  auto put = [&](const char* k, PyObject* v) {
    PyRef ref = PyRef::steal(v);
    return ref && PyDict_SetItemString(d.get(), k, ref.get()) == 0;
  };
  bool ok = put("enabled", PyBool_FromLong(g.enabled)) && put("armed", PyBool_FromLong(g.armed)) &&
            put("foreign_hook_after", PyBool_FromLong(g.foreign_after)) &&
            put("chained", PyBool_FromLong(g.prev != nullptr)) &&
            put("frames", PyLong_FromUnsignedLongLong(g.frames)) &&
            put("swaps", PyLong_FromUnsignedLongLong(g.swaps)) &&
            put("codes_resolved", PyLong_FromUnsignedLongLong(g.resolved)) &&
            put("codes_replaced", PyLong_FromUnsignedLongLong(g.replaced)) &&
            put("step_asides", PyLong_FromUnsignedLongLong(g.step_asides)) &&
            put("deep_step_asides", PyLong_FromUnsignedLongLong(g.deep_step_asides)) &&
            put("sweeps", PyLong_FromUnsignedLongLong(g.sweeps)) &&
            put("rearms", PyLong_FromUnsignedLongLong(g.rearms)) &&
            put("last_rearm", PyUnicode_FromString(g.last_rearm.c_str())) &&
            put("quiet_threshold", PyLong_FromLong(g.quiet_threshold));
  if (!ok) return nullptr;
  PyRef errs = PyRef::steal(PyList_New(0));
  if (!errs) return nullptr;
  for (auto& e : g.errors) {
    PyRef s = PyRef::steal(PyUnicode_DecodeUTF8(e.data(), (Py_ssize_t)e.size(), "replace"));
    if (!s || PyList_Append(errs.get(), s.get()) < 0) return nullptr;
  }
  if (PyDict_SetItemString(d.get(), "errors", errs.get()) < 0) return nullptr;
  return d.release();
}

#endif  // STAGEPY_HOOK_SUPPORTED

}  // namespace stagepy::hook
