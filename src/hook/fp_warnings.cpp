// See fp_warnings.h.
#include "hook/fp_warnings.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "hook/py_ref.h"
#include "hook/runtime_state.h"

namespace stagepy::runtime {
namespace {

// Whether the warnings filters let a RuntimeWarning be shown at most once per location
// (or not at all): no "error" (it would raise at the statement) and no "always" (every
// occurrence would be shown). Cached while the filters list and its items stay the same.
bool filters_allow_deferral() {
  static PyObject* warnings_mod = nullptr;
  static std::vector<PyObject*> seen;  // borrowed identities: list, then its items
  static bool answer = false;
  if (!warnings_mod) {
    warnings_mod = PyImport_ImportModule("warnings");
    if (!warnings_mod) {
      PyErr_Clear();
      return false;
    }
  }
  PyRef filters = PyRef::steal(PyObject_GetAttrString(warnings_mod, "filters"));
  if (!filters || !PyList_Check(filters.get())) {
    PyErr_Clear();
    return false;
  }
  Py_ssize_t n = PyList_GET_SIZE(filters.get());
  bool same = (Py_ssize_t)seen.size() == n + 1 && seen[0] == filters.get();
  for (Py_ssize_t i = 0; same && i < n; i++) same = seen[(size_t)i + 1] == PyList_GET_ITEM(filters.get(), i);
  if (same) return answer;
  seen.assign(1, filters.get());
  bool ok = true;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* item = PyList_GET_ITEM(filters.get(), i);
    seen.push_back(item);
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) < 3) {
      ok = false;
      continue;
    }
    PyObject* action = PyTuple_GET_ITEM(item, 0);
    PyObject* category = PyTuple_GET_ITEM(item, 2);
    if (!PyUnicode_Check(action)) {
      ok = false;
      continue;
    }
    bool risky = PyUnicode_CompareWithASCIIString(action, "error") == 0 ||
                 PyUnicode_CompareWithASCIIString(action, "always") == 0 ||
                 PyUnicode_CompareWithASCIIString(action, "all") == 0;
    if (!risky) continue;
    int sub = PyType_Check(category) ? PyObject_IsSubclass(PyExc_RuntimeWarning, category) : 1;
    if (sub < 0) PyErr_Clear();
    if (sub != 0) ok = false;
  }
  // The list object and its items are kept alive by the warnings module while they stay
  // in it; a new list (catch_warnings) or new items compare different.
  answer = ok;
  return ok;
}

}  // namespace

FpMode fp_mode_now(const np::ErrState& es) {
  using A = np::ErrAction;
  if (es.divide == A::Ignore && es.over == A::Ignore && es.invalid == A::Ignore) return FpMode::Ignore;
  for (A a : {es.divide, es.over, es.invalid})
    if (a == A::Other) return FpMode::Exact;
  return filters_allow_deferral() ? FpMode::Deferred : FpMode::Exact;
}

int emit_deferred_warnings(const KernelLayout& L, const int64_t* state, const FrameRef& f, const np::ErrState& es) {
  if (L.warn_slot < 0) return 0;
  static PyObject* emit = nullptr;
  static const char* kKinds[3] = {"divide", "overflow", "invalid"};
  const np::ErrAction actions[3] = {es.divide, es.over, es.invalid};
  // (first occurrence, site, kind), in the order CPython would have raised them.
  std::vector<std::tuple<int64_t, size_t, int>> seen;
  for (size_t k = 0; k < L.warn_sites.size(); k++)
    for (int j = 0; j < 3; j++) {
      int64_t first = state[(size_t)L.warn_slot + 3 * k + (size_t)j];
      if (first > 0 && actions[j] == np::ErrAction::Warn) seen.emplace_back(first, k, j);
    }
  if (seen.empty()) return 0;
  std::sort(seen.begin(), seen.end());
  if (!emit) {
    PyRef mod = PyRef::steal(PyImport_ImportModule("stagepy._fpwarn"));
    if (!mod) return -1;
    emit = PyObject_GetAttrString(mod.get(), "emit");
    if (!emit) return -1;
  }
  PyObject* globals = f.globals ? f.globals : Py_None;
  for (auto& [first, k, j] : seen) {
    const WarnSite& w = L.warn_sites[k];
    PyRef r = PyRef::steal(PyObject_CallFunction(emit, "ssssiOss", w.op, dtype_name(w.dtype), kKinds[j],
                                                 PyUnicode_AsUTF8(f.code->co_filename), w.line, globals,
                                                 w.lhs.c_str(), w.rhs.c_str()));
    if (!r) return -1;
  }
  return 0;
}

}  // namespace stagepy::runtime
