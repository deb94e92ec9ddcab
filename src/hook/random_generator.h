// The `random` module's generator for kernels: in, the module (its instance `random._inst`, a
// fresh Random to probe, and the functions bound to the instance: random.random, uniform,
// randint, randrange, choice); out, those functions registered as the builtins kernels compute
// (Builtin::RandomRandom...) and the generator's words and index given to the backend
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
std::string register_random(PyObject* inst, PyObject* probe, PyObject* functions);
// Whether the instance still draws as checked: its class's methods and its own attributes
// (random, getrandbits, _randbelow, randrange, randint, uniform, choice) are the ones checked (a
// class or instance attribute set since would change what the functions compute).
bool random_methods_intact();

}  // namespace stagepy::runtime
