// See random_generator.h.
#include "hook/random_generator.h"

#include <cstring>
#include <vector>

#include "backends/cpu/random_draws.h"
#include "hook/py_ref.h"
#include "hook/runtime_state.h"

namespace stagepy::runtime {
namespace {

using backends::cpu::kMtWords;

// Where CPython's RandomObject (Modules/_randommodule.c: PyObject_HEAD, int index, uint32_t
// state[624]) keeps them; checked against getstate() before anything is drawn.
constexpr size_t kIndexAt = sizeof(PyObject), kWordsAt = sizeof(PyObject) + sizeof(int);

constexpr const char* kMethods[] = {"random", "getrandbits", "_randbelow", "randrange", "randint", "uniform", "choice"};
constexpr size_t kNMethods = sizeof(kMethods) / sizeof(kMethods[0]);

// The instance kernels draw from, its class, and what the class's methods were when checked.
// Kept for the process (the registered functions hold the instance too).
PyObject* g_inst = nullptr;
PyTypeObject* g_class = nullptr;
PyObject* g_names[kNMethods] = {};
PyObject* g_checked[kNMethods] = {};

struct Words {
  uint32_t* mt;
  int32_t* index;
};

// The words and index inside `r`, where its getstate() says they are.
bool words_of(PyObject* r, Words* w, std::string* why) {
  if ((size_t)Py_TYPE(r)->tp_basicsize < kWordsAt + kMtWords * sizeof(uint32_t)) {
    *why = "its objects are smaller than CPython's generator";
    return false;
  }
  w->index = reinterpret_cast<int32_t*>(reinterpret_cast<char*>(r) + kIndexAt);
  w->mt = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(r) + kWordsAt);
  PyRef st = PyRef::steal(PyObject_CallMethod(r, "getstate", nullptr));
  if (!st || !PyTuple_Check(st.get()) || PyTuple_GET_SIZE(st.get()) != 3) {
    *why = "getstate() is not (version, words, gauss)";
    return false;
  }
  PyObject* words = PyTuple_GET_ITEM(st.get(), 1);
  if (!PyTuple_Check(words) || PyTuple_GET_SIZE(words) != kMtWords + 1) {
    *why = "getstate() does not hold 625 words";
    return false;
  }
  for (int i = 0; i <= kMtWords; i++) {
    const unsigned long x = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(words, i));
    if (PyErr_Occurred()) return false;
    if (x != (i < kMtWords ? (unsigned long)w->mt[i] : (unsigned long)(uint32_t)*w->index)) {
      *why = "its words are not where CPython 3.11 to 3.13 keep them";
      return false;
    }
  }
  return true;
}

// Draws made here from a copy of the probe against the probe's own: random(), and
// _randbelow(n) (getrandbits of 1 to 63 bits) across several refills of the words; then the
// probe's memory against the copy.
bool draws_match(PyObject* probe, const Words& w, std::string* why) {
  std::vector<uint32_t> mt(w.mt, w.mt + kMtWords);
  int32_t index = *w.index;
  for (int k = 0; k < 1500; k++) {
    PyRef x = PyRef::steal(PyObject_CallMethod(probe, "random", nullptr));
    if (!x || !PyFloat_CheckExact(x.get())) return false;
    const double mine = backends::cpu::random_double(mt.data(), &index), theirs = PyFloat_AS_DOUBLE(x.get());
    if (std::memcmp(&mine, &theirs, sizeof(double)) != 0) {
      *why = "random() draws differently";
      return false;
    }
  }
  const int64_t ns[] = {1, 2, 3, 5, 6, 7, 100, 1000003, (1LL << 31) - 1, 1LL << 31, (1LL << 32) - 1, 1LL << 32,
                        (1LL << 32) + 1, (1LL << 40) + 3, (1LL << 53) + 1, (1LL << 62) + 1, INT64_MAX};
  for (int64_t n : ns)
    for (int k = 0; k < 40; k++) {
      PyRef x = PyRef::steal(PyObject_CallMethod(probe, "_randbelow", "L", (long long)n));
      if (!x) return false;
      const long long theirs = PyLong_AsLongLong(x.get());
      if (PyErr_Occurred()) return false;
      if (backends::cpu::random_below(mt.data(), &index, n) != theirs) {
        *why = "_randbelow() draws differently";
        return false;
      }
    }
  if (index != *w.index || std::memcmp(mt.data(), w.mt, sizeof(uint32_t) * kMtWords) != 0) {
    *why = "the words end differently";
    return false;
  }
  return true;
}

}  // namespace

std::string register_random(PyObject* inst, PyObject* probe, PyObject* functions) {
  if (g_inst) return "";
  if (Py_TYPE(inst) != Py_TYPE(probe)) return "random's instance is not of the probe's class";
  if (!PyTuple_Check(functions) || PyTuple_GET_SIZE(functions) != 5) return "internal error: the functions";
  std::string why;
  Words probe_words, inst_words;
  if (!words_of(probe, &probe_words, &why) || !draws_match(probe, probe_words, &why) || !words_of(inst, &inst_words, &why)) {
    if (PyErr_Occurred()) PyErr_Clear();
    return why.empty() ? "the self-test raised" : why;
  }
  // The functions are the instance's methods, as its class has them.
  const Builtin kinds[] = {Builtin::RandomRandom, Builtin::RandomUniform, Builtin::RandomRandint, Builtin::RandomRandrange,
                           Builtin::RandomChoice};
  const char* names[] = {"random", "uniform", "randint", "randrange", "choice"};
  for (int k = 0; k < 5; k++) {
    PyRef bound = PyRef::steal(PyObject_GetAttrString(inst, names[k]));
    const int same = bound ? PyObject_RichCompareBool(bound.get(), PyTuple_GET_ITEM(functions, k), Py_EQ) : -1;
    if (same != 1) {
      PyErr_Clear();
      return std::string("random.") + names[k] + " is not the instance's method";
    }
  }
  g_class = Py_TYPE(inst);
  Py_INCREF(g_class);
  for (size_t i = 0; i < kNMethods; i++) {
    g_names[i] = PyUnicode_InternFromString(kMethods[i]);
    if (!g_names[i]) {
      PyErr_Clear();
      return "internal error: a name";
    }
    g_checked[i] = _PyType_Lookup(g_class, g_names[i]);
    Py_XINCREF(g_checked[i]);
  }
  g_inst = inst;
  Py_INCREF(g_inst);
  if (!random_methods_intact()) {
    g_inst = nullptr;  // (the reference stays: kept for the process either way)
    return "the instance has methods of its own";
  }
  backends::cpu::set_random_generator(inst_words.mt, inst_words.index);
  for (int k = 0; k < 5; k++) register_callable(PyTuple_GET_ITEM(functions, k), kinds[k]);
  return "";
}

bool random_methods_intact() {
  if (!g_inst || Py_TYPE(g_inst) != g_class) return false;
  for (size_t i = 0; i < kNMethods; i++)
    if (_PyType_Lookup(g_class, g_names[i]) != g_checked[i]) return false;
  PyRef dict = PyRef::steal(PyObject_GenericGetDict(g_inst, nullptr));
  if (!dict) {
    PyErr_Clear();
    return false;
  }
  for (size_t i = 0; i < kNMethods; i++) {
    PyObject* own = PyDict_GetItemWithError(dict.get(), g_names[i]);
    if (own || PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
  }
  return true;
}

}  // namespace stagepy::runtime
