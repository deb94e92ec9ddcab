// See runtime_state.h.
#include "hook/runtime_state.h"

#include <unordered_map>

#include "hook/py_ref.h"

namespace stagepy::runtime {
namespace {
specialize::Oracle* g_oracle = nullptr;
std::unordered_map<PyObject*, Builtin>* g_known = nullptr;
unsigned long long g_kernel_id = 0;
}  // namespace

specialize::Oracle& mutable_oracle() {
  if (!g_oracle) {
    g_oracle = new specialize::Oracle();  // lives for the process
    g_oracle->hypot_test.run = [] { return self_test_passes("verify_hypot"); };
    // complex ** and cmath's functions: each checked the first time a kernel needs it.
    for (int f = 0; f < backends::cpu::kCFnCount; f++)
      g_oracle->cfunc_tests[(size_t)f].run = [f] {
        return self_test_passes("verify_cfunc", backends::cpu::cfn_name(static_cast<backends::cpu::CFn>(f)));
      };
  }
  return *g_oracle;
}
const specialize::Oracle& oracle() { return mutable_oracle(); }

Builtin known_callable(PyObject* o) {
  if (!g_known) return Builtin::None_;
  auto it = g_known->find(o);
  return it == g_known->end() ? Builtin::None_ : it->second;
}

void register_callable(PyObject* o, Builtin b) {
  if (!g_known) g_known = new std::unordered_map<PyObject*, Builtin>();
  if (g_known->count(o)) return;
  Py_INCREF(o);  // kept alive: identity is the guard
  (*g_known)[o] = b;
}

namespace {
std::unordered_map<PyObject*, PyObject*>* g_twins = nullptr;
}  // namespace

PyObject* twin_of(PyObject* o) {
  if (!g_twins) return nullptr;
  auto it = g_twins->find(o);
  return it == g_twins->end() ? nullptr : it->second;
}

bool is_twin(PyObject* fn) {
  if (!g_twins) return false;
  for (auto& [o, t] : *g_twins)
    if (t == fn) return true;
  return false;
}

void register_twin(PyObject* o, PyObject* twin) {
  if (!g_twins) g_twins = new std::unordered_map<PyObject*, PyObject*>();
  if (g_twins->count(o)) return;
  Py_INCREF(o);  // kept alive: identity is the guard
  Py_INCREF(twin);
  (*g_twins)[o] = twin;
}

unsigned long long next_kernel_id() { return ++g_kernel_id; }

bool self_test_passes(const char* fn, const char* arg) {
  SavedError keep;
  PyRef m = PyRef::steal(PyImport_ImportModule("stagepy._types"));
  PyRef ok = !m ? PyRef()
             : arg ? PyRef::steal(PyObject_CallMethod(m.get(), fn, "s", arg))
                   : PyRef::steal(PyObject_CallMethod(m.get(), fn, nullptr));
  if (!ok) PyErr_Clear();
  return ok && PyObject_IsTrue(ok.get()) == 1;
}

namespace {
PyObject* g_helper_info = nullptr;  // strong reference
}  // namespace

PyObject* helper_info_fn() { return g_helper_info; }
void set_helper_info_fn(PyObject* fn) {
  Py_XINCREF(fn);
  Py_XSETREF(g_helper_info, fn);
}

}  // namespace stagepy::runtime
