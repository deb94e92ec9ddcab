// np.random's functions for kernels: in, NumPy's global RandomState (np.random.mtrand._rand),
// a fresh RandomState to probe, where each keeps its MT19937 words (the bit generator's
// ctypes.state_address) and its cached normal (RandomState's aug_state: has_gauss, gauss,
// which stagepy._types.register_numpy_random found by setting the probe's), and the module's
// functions bound to the global one (np.random.rand, random, random_sample, sample, uniform,
// randint, randn, standard_normal, normal, exponential); out, those functions registered as
// the builtins kernels compute (Builtin::NpRandomRandom...) and the generator given to the
// backend (backends/cpu/random_draws.h) — only once draws made here from a copy of the probe
// matched NumPy's own (random_sample, randint over ranges of every width, standard_normal,
// normal, uniform, exponential), ending in the same state. Otherwise the nests stay in CPython.
#pragma once
#include <Python.h>

#include <string>

namespace stagepy::runtime {

// Returns why the generator was not taken ("" when it was).
std::string register_numpy_random(PyObject* inst, unsigned long long inst_state, PyObject* probe,
                                  unsigned long long probe_state, long gauss_offset, PyObject* functions);
// Whether the global RandomState still draws from the words registered (np.random.seed() and
// set_state() change them in place; np.random.set_bit_generator() replaces them) and no other
// thread holds its lock.
bool numpy_random_intact();
// Once numpy.random is imported: has stagepy._types.register_numpy_random() run (the first
// time a nest meets a method, such as np.random.rand) and taken the generator? True only on
// the call that registered it.
bool registered_numpy_random_now();

}  // namespace stagepy::runtime
