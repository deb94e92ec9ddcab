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

constexpr const char* kMethods[] = {"random", "getrandbits", "_randbelow", "randrange", "randint", "uniform",
                                    "choice", "gauss", "normalvariate", "expovariate"};
constexpr size_t kNMethods = sizeof(kMethods) / sizeof(kMethods[0]);
// What random.py's gauss(), normalvariate() and expovariate() call and read from the module.
constexpr const char* kGlobals[] = {"_log", "_sqrt", "_cos", "_sin", "TWOPI", "NV_MAGICCONST"};
constexpr size_t kNGlobals = sizeof(kGlobals) / sizeof(kGlobals[0]);
constexpr size_t kNFunctions = 8;  // random.random ... random.expovariate, as register_random has them

// The instance kernels draw from, its class, and what the class's methods and the module's
// globals were when checked. Kept for the process (the registered functions hold the instance too).
PyObject* g_inst = nullptr;
PyTypeObject* g_class = nullptr;
PyObject* g_names[kNMethods] = {};
PyObject* g_checked[kNMethods] = {};
PyObject* g_globals = nullptr;
PyObject* g_global_names[kNGlobals] = {};
PyObject* g_global_values[kNGlobals] = {};
PyObject* g_gauss_next = nullptr;  // the attribute's name

// gauss_next as a kernel read it and as it leaves it, until flush_random_state() writes it.
backends::cpu::GaussNext g_gauss_read, g_gauss_left;
bool g_gauss_dirty = false;

// GaussNextAccess for the kernels (holding the GIL).
bool load_gauss_next(backends::cpu::GaussNext* out) {
  if (!g_inst) return false;
  PyRef dict = PyRef::steal(PyObject_GenericGetDict(g_inst, nullptr));
  PyObject* v = dict ? PyDict_GetItemWithError(dict.get(), g_gauss_next) : nullptr;
  if (!v) {
    PyErr_Clear();  // (no dict, or no gauss_next: CPython's gauss() raises; the statement goes there)
    return false;
  }
  if (v == Py_None) *out = {};
  else if (PyFloat_CheckExact(v)) *out = {1, PyFloat_AS_DOUBLE(v)};
  else return false;
  g_gauss_read = *out;
  return true;
}

void store_gauss_next(const backends::cpu::GaussNext& g) {
  g_gauss_left = g;
  g_gauss_dirty = g.has != g_gauss_read.has ||
                  (g.has && std::memcmp(&g.value, &g_gauss_read.value, sizeof(double)) != 0);
}

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
  // gauss() (its twin kept between calls), normalvariate(), expovariate(1.0), interleaved.
  backends::cpu::GaussNext next;
  for (int k = 0; k < 301; k++) {
    const char* method = k % 3 == 0 ? "gauss" : k % 3 == 1 ? "normalvariate" : "expovariate";
    PyRef x = PyRef::steal(k % 3 == 2 ? PyObject_CallMethod(probe, method, "d", 1.0) : PyObject_CallMethod(probe, method, nullptr));
    if (!x || !PyFloat_CheckExact(x.get())) return false;
    double mine = k % 3 == 0   ? 0.0 + backends::cpu::random_gauss(mt.data(), &index, &next) * 1.0
                  : k % 3 == 1 ? 0.0 + backends::cpu::random_normal(mt.data(), &index) * 1.0
                               : backends::cpu::random_expo(mt.data(), &index) / 1.0;
    const double theirs = PyFloat_AS_DOUBLE(x.get());
    if (std::memcmp(&mine, &theirs, sizeof(double)) != 0) {
      *why = std::string(method) + "() draws differently";
      return false;
    }
  }
  PyRef twin = PyRef::steal(PyObject_GetAttr(probe, g_gauss_next));
  const double kept = twin && PyFloat_CheckExact(twin.get()) ? PyFloat_AS_DOUBLE(twin.get()) : 0.0;
  if (!twin || !PyFloat_CheckExact(twin.get()) || !next.has || std::memcmp(&next.value, &kept, sizeof(double)) != 0) {
    *why = "gauss() keeps another gauss_next";
    return false;
  }
  if (index != *w.index || std::memcmp(mt.data(), w.mt, sizeof(uint32_t) * kMtWords) != 0) {
    *why = "the words end differently";
    return false;
  }
  return true;
}

}  // namespace

std::string register_random(PyObject* inst, PyObject* probe, PyObject* functions, PyObject* globals) {
  if (g_inst) return "";
  if (Py_TYPE(inst) != Py_TYPE(probe)) return "random's instance is not of the probe's class";
  if (!PyTuple_Check(functions) || PyTuple_GET_SIZE(functions) != (Py_ssize_t)kNFunctions)
    return "internal error: the functions";
  // random.py's constants and the functions it calls, as the module has them.
  for (size_t i = 0; i < kNGlobals; i++) {
    g_global_names[i] = PyUnicode_InternFromString(kGlobals[i]);
    PyObject* v = g_global_names[i] ? PyDict_GetItemWithError(globals, g_global_names[i]) : nullptr;
    if (!v) {
      PyErr_Clear();
      return std::string("the random module has no ") + kGlobals[i];
    }
    g_global_values[i] = v;
  }
  if (!PyFloat_CheckExact(g_global_values[4]) || !PyFloat_CheckExact(g_global_values[5]))
    return "random.TWOPI or random.NV_MAGICCONST is not a float";
  backends::cpu::set_random_constants({PyFloat_AS_DOUBLE(g_global_values[4]), PyFloat_AS_DOUBLE(g_global_values[5])});
  g_gauss_next = PyUnicode_InternFromString("gauss_next");
  if (!g_gauss_next) {
    PyErr_Clear();
    return "internal error: a name";
  }
  std::string why;
  Words probe_words, inst_words;
  if (!words_of(probe, &probe_words, &why) || !draws_match(probe, probe_words, &why) || !words_of(inst, &inst_words, &why)) {
    if (PyErr_Occurred()) PyErr_Clear();
    return why.empty() ? "the self-test raised" : why;
  }
  // The functions are the instance's methods, as its class has them.
  const Builtin kinds[kNFunctions] = {Builtin::RandomRandom,    Builtin::RandomUniform, Builtin::RandomRandint,
                                      Builtin::RandomRandrange, Builtin::RandomChoice,  Builtin::RandomGauss,
                                      Builtin::RandomNormalvariate, Builtin::RandomExpovariate};
  const char* names[kNFunctions] = {"random", "uniform", "randint", "randrange", "choice", "gauss", "normalvariate", "expovariate"};
  for (size_t k = 0; k < kNFunctions; k++) {
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
  g_globals = globals;
  Py_INCREF(g_globals);
  for (size_t i = 0; i < kNGlobals; i++) Py_INCREF(g_global_values[i]);
  g_inst = inst;
  Py_INCREF(g_inst);
  if (!random_methods_intact()) {
    g_inst = nullptr;  // (the reference stays: kept for the process either way)
    return "the instance has methods of its own, or its class a gauss_next";
  }
  backends::cpu::set_random_generator(inst_words.mt, inst_words.index, {load_gauss_next, store_gauss_next});
  for (size_t k = 0; k < kNFunctions; k++) register_callable(PyTuple_GET_ITEM(functions, k), kinds[k]);
  return "";
}

bool flush_random_state() {
  if (!g_gauss_dirty) return true;
  g_gauss_dirty = false;
  PyRef v = g_gauss_left.has ? PyRef::steal(PyFloat_FromDouble(g_gauss_left.value)) : PyRef::borrow(Py_None);
  PyRef dict = v ? PyRef::steal(PyObject_GenericGetDict(g_inst, nullptr)) : PyRef();
  return dict && PyDict_SetItem(dict.get(), g_gauss_next, v.get()) == 0;
}

bool random_methods_intact() {
  if (!g_inst || Py_TYPE(g_inst) != g_class) return false;
  for (size_t i = 0; i < kNMethods; i++)
    if (_PyType_Lookup(g_class, g_names[i]) != g_checked[i]) return false;
  if (_PyType_Lookup(g_class, g_gauss_next)) return false;  // (a property, a slot: not the instance's dict)
  for (size_t i = 0; i < kNGlobals; i++)
    if (PyDict_GetItemWithError(g_globals, g_global_names[i]) != g_global_values[i]) {
      PyErr_Clear();
      return false;
    }
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
