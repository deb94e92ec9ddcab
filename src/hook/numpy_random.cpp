// See numpy_random.h.
#include "hook/numpy_random.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/random_draws.h"
#include "hook/py_ref.h"
#include "hook/runtime_state.h"

namespace stagepy::runtime {
namespace {

using backends::cpu::GaussNext;
using backends::cpu::kMtWords;

// Inside a RandomState at `gauss_offset - 16`: its aug_bitgen_t (legacy-distributions.h:
// bitgen_t *bit_generator; int has_gauss; double gauss), whose bit_generator points at the
// RandomState's bitgen_t, whose first field is the MT19937 state the draws use.
struct Generator {
  PyObject* obj = nullptr;
  uint32_t* key = nullptr;  // mt19937_state: uint32_t key[624]; int pos
  int32_t* pos = nullptr;
  char* aug = nullptr;
  bool draws_from_key() const {
    void* bitgen = *reinterpret_cast<void**>(aug);
    return bitgen && *reinterpret_cast<void**>(bitgen) == static_cast<void*>(key);
  }
  GaussNext twin() const {
    GaussNext g;
    std::memcpy(&g.has, aug + 8, sizeof(int32_t));
    std::memcpy(&g.value, aug + 16, sizeof(double));
    return g;
  }
};

Generator g_global;
PyObject* g_lock = nullptr;

Generator generator_of(PyObject* obj, unsigned long long state, long gauss_offset) {
  Generator g;
  g.obj = obj;
  g.key = reinterpret_cast<uint32_t*>((uintptr_t)state);
  g.pos = reinterpret_cast<int32_t*>(g.key + kMtWords);
  g.aug = reinterpret_cast<char*>(obj) + gauss_offset - 16;
  return g;
}

bool load_twin(GaussNext* out) {
  *out = g_global.twin();
  return true;
}

void store_twin(const GaussNext& g) {
  int32_t has = g.has;
  std::memcpy(g_global.aug + 8, &has, sizeof(int32_t));
  std::memcpy(g_global.aug + 16, &g.value, sizeof(double));
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

// Draws from a copy of the probe against the probe's own methods, interleaved, then the
// probe's words, position and cached normal against the copy's.
bool draws_match(const Generator& probe, std::string* why) {
  std::vector<uint32_t> key(probe.key, probe.key + kMtWords);
  int32_t pos = *probe.pos;
  GaussNext twin = probe.twin();
  using namespace backends::cpu;
  auto call = [&](const char* method, const char* fmt, auto... a) {
    return PyRef::steal(PyObject_CallMethod(probe.obj, method, fmt, a...));
  };
  auto as_double = [&](const PyRef& x, double* out) {
    if (!x || !PyFloat_CheckExact(x.get())) return false;
    *out = PyFloat_AS_DOUBLE(x.get());
    return true;
  };
  const long long ranges[][2] = {{0, 1},       {0, 2},          {-3, 4},         {0, 6},
                                 {1, 7},       {0, 1000003},    {0, 1LL << 31},  {-(1LL << 31), 1LL << 31},
                                 {0, (1LL << 32) - 1}, {0, 1LL << 32}, {-5, (1LL << 32) - 5}, {0, (1LL << 32) + 1},
                                 {0, 1LL << 40}, {-(1LL << 62), 1LL << 62}, {INT64_MIN, INT64_MAX}, {7, INT64_MAX}};
  const double pairs[][2] = {{0.0, 1.0}, {-2.5, 3.25}, {1e10, -7.0}, {3.0, 0.1}, {-1e-300, 1e-300}};
  for (int k = 0; k < 400; k++) {
    double theirs = 0, mine = 0;
    const double a = pairs[k % 5][0], b = pairs[k % 5][1];
    switch (k % 6) {
      case 0:
        if (!as_double(call("random_sample", nullptr), &theirs)) return false;
        mine = random_double(key.data(), &pos);
        break;
      case 1:
        if (!as_double(call("standard_normal", nullptr), &theirs)) return false;
        mine = numpy_gauss(key.data(), &pos, &twin);
        break;
      case 2:
        if (!as_double(call("normal", "dd", a, std::fabs(b)), &theirs)) return false;
        mine = a + std::fabs(b) * numpy_gauss(key.data(), &pos, &twin);
        break;
      case 3:
        if (!as_double(call("uniform", "dd", a, b), &theirs)) return false;
        mine = a + (b - a) * random_double(key.data(), &pos);
        break;
      case 4:
        if (!as_double(call("exponential", "d", std::fabs(a)), &theirs)) return false;
        mine = std::fabs(a) * random_expo(key.data(), &pos);  // (standard_exponential's -log(1 - u))
        break;
      default: {
        const long long* r = ranges[(k / 6) % 16];
        PyRef x = call("randint", "LL", r[0], r[1]);
        if (!x) return false;
        const long long t = PyLong_AsLongLong(x.get());
        if (PyErr_Occurred()) return false;
        if (t != numpy_randint(key.data(), &pos, r[0], r[1])) {
          *why = "randint() draws differently";
          return false;
        }
        continue;
      }
    }
    if (!same_bits(mine, theirs)) {
      *why = std::string("draw ") + std::to_string(k) + " differs from NumPy's";
      return false;
    }
  }
  const GaussNext left = probe.twin();
  if (pos != *probe.pos || std::memcmp(key.data(), probe.key, sizeof(uint32_t) * kMtWords) != 0 ||
      left.has != twin.has || !same_bits(left.value, twin.value)) {
    *why = "the generator's state ends differently";
    return false;
  }
  return true;
}

Builtin kind_of(const char* name) {
  const struct {
    const char* name;
    Builtin b;
  } kinds[] = {{"random", Builtin::NpRandomRandom},       {"uniform", Builtin::NpRandomUniform},
               {"randint", Builtin::NpRandomRandint},     {"standard_normal", Builtin::NpRandomStandardNormal},
               {"normal", Builtin::NpRandomNormal},       {"exponential", Builtin::NpRandomExponential}};
  for (auto& k : kinds)
    if (std::strcmp(k.name, name) == 0) return k.b;
  return Builtin::None_;
}

}  // namespace

std::string register_numpy_random(PyObject* inst, unsigned long long inst_state, PyObject* probe,
                                  unsigned long long probe_state, long gauss_offset, PyObject* functions) {
  if (g_global.obj) return "";
  if (Py_TYPE(inst) != Py_TYPE(probe)) return "np.random's generator is not of the probe's class";
  if (gauss_offset < 16 || gauss_offset + (long)sizeof(double) > (long)Py_TYPE(probe)->tp_basicsize)
    return "no cached normal inside the RandomState";
  const Generator p = generator_of(probe, probe_state, gauss_offset), g = generator_of(inst, inst_state, gauss_offset);
  if (!p.draws_from_key() || !g.draws_from_key()) return "the RandomState does not draw from its bit generator's words";
  std::string why;
  if (!draws_match(p, &why)) {
    if (PyErr_Occurred()) PyErr_Clear();
    return why.empty() ? "the self-test raised" : why;
  }
  // The functions: (function, kind) pairs, each bound to the global RandomState.
  if (!PyList_Check(functions)) return "internal error: the functions";
  std::vector<std::pair<PyObject*, Builtin>> found;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(functions); i++) {
    PyObject* item = PyList_GET_ITEM(functions, i);
    PyObject* fn = nullptr;
    const char* kind = nullptr;
    if (!PyArg_ParseTuple(item, "Os", &fn, &kind)) {
      PyErr_Clear();
      return "internal error: a function";
    }
    PyRef self = PyRef::steal(PyObject_GetAttrString(fn, "__self__"));
    if (!self || self.get() != inst) {
      PyErr_Clear();
      return "np.random's functions are not the global RandomState's methods";
    }
    const Builtin b = kind_of(kind);
    if (b == Builtin::None_) return std::string("internal error: the kind ") + kind;
    found.push_back({fn, b});
  }
  // RandomState's methods hold its bit generator's lock (the same object) while they draw.
  PyRef bit_generator = PyRef::steal(PyObject_GetAttrString(inst, "_bit_generator"));
  PyRef lock = bit_generator ? PyRef::steal(PyObject_GetAttrString(bit_generator.get(), "lock")) : PyRef();
  if (!lock) {
    PyErr_Clear();
    return "the RandomState's bit generator has no lock";
  }
  g_lock = lock.get();
  Py_INCREF(g_lock);
  g_global = g;
  Py_INCREF(inst);
  backends::cpu::set_numpy_generator(g.key, g.pos, {load_twin, store_twin});
  for (auto& [fn, b] : found) register_callable(fn, b);
  return "";
}

bool registered_numpy_random_now() {
  static bool tried = false;
  if (tried || g_global.obj) return false;
  PyObject* name = PyUnicode_FromString("numpy.random");
  PyRef mod = PyRef::steal(name ? PyImport_GetModule(name) : nullptr);
  Py_XDECREF(name);
  if (!mod) {
    PyErr_Clear();
    return false;  // (not imported yet: perhaps later)
  }
  tried = true;
  PyRef types_mod = PyRef::steal(PyImport_ImportModule("stagepy._types"));
  PyRef r = types_mod ? PyRef::steal(PyObject_CallMethod(types_mod.get(), "register_numpy_random", nullptr)) : PyRef();
  if (!r) PyErr_Clear();
  return g_global.obj != nullptr;
}

bool numpy_random_intact() {
  if (!g_global.obj || !g_global.draws_from_key()) return false;
  // (An RLock has no locked() before 3.14: acquired without blocking and let go, it was free.
  // No other thread can take it while this one holds the GIL for the kernel.)
  PyRef got = PyRef::steal(PyObject_CallMethod(g_lock, "acquire", "O", Py_False));
  if (!got) {
    PyErr_Clear();
    return false;
  }
  if (got.get() != Py_True) return false;
  PyRef released = PyRef::steal(PyObject_CallMethod(g_lock, "release", nullptr));
  if (!released) {
    PyErr_Clear();
    return false;
  }
  return true;
}

}  // namespace stagepy::runtime
