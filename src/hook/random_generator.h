// The `random` module's generator for kernels: in, the module (its instance `random._inst`, a
// fresh Random to probe, and the functions bound to the instance: random.random, uniform,
// randint, randrange, choice, gauss, normalvariate, expovariate, and the module's dict); out, those functions registered as the builtins kernels compute
// (Builtin::RandomRandom...) and the generator's words and index given to the backend, with
// its gauss_next read and written for the kernels (GaussNextAccess; flush_random_state)
// (backends/cpu/random_draws.h) — only once they were found inside CPython's _random.Random
// object (the probe's getstate() against its memory) and draws made here from a copy of the
// probe matched CPython's own random(), getrandbits() and _randbelow() on it, ending in the
// same state. A CPython whose generator differs is never drawn from: the nests stay in CPython.
#pragma once
#include <Python.h>

#include <string>

namespace stagepy::runtime {

// From Python (stagepy._types.register_python). Returns why the generator was not taken
// ("" when it was).
std::string register_random(PyObject* inst, PyObject* probe, PyObject* functions, PyObject* globals);
// Whether the instance still draws as checked: its class's methods and its own attributes
// (random, getrandbits, _randbelow, randrange, randint, uniform, choice, gauss, normalvariate,
// expovariate) are the ones checked (a class or instance attribute set since would change what
// the functions compute), its class has no `gauss_next` (the instance's dict holds it), and
// the module's globals random.py's functions use (_log, _sqrt, _cos, _sin, TWOPI,
// NV_MAGICCONST) are the objects they were.
bool random_methods_intact();
// After a kernel ran: random.gauss()'s twin, where the kernel changed it, goes to the
// instance's gauss_next. False with a Python exception set where that failed.
bool flush_random_state();

}  // namespace stagepy::runtime
