// The PEP 523 frame-evaluation hook: in goes every Python frame the interpreter starts
// while discovery is armed; out comes the same frame, evaluated either with its own code
// or with the replacement code object decided for it (swapped in place, from the first
// call). Decisions are cached on the code object (co_extra).
//
// The hook pays CPython's PEP 523 price (no inlined Python-to-Python calls) only while
// new code is being discovered: it steps aside after a quiet period (every frame it saw
// already decided, every live function swept) and is re-armed by the events that bring
// new code (compile, exec, marshal, code/function creation, __code__ assignment).
#pragma once
#include <Python.h>

namespace stagepy::hook {

// True when this build of the extension can hook this interpreter.
bool supported();
const char* unsupported_reason();

// enable/disable: idempotent. enable() chains to an eval function installed before it.
int enable();   // 0, or -1 with a Python exception
int disable();
bool enabled();
bool armed();

// The Python callables that do the work the C layer cannot: the resolver maps a code
// object to its replacement (or None); the sweeper decides every live function before
// the hook steps aside and answers whether stepping aside is safe.
// With prefilter=false every new code object goes to the resolver (tests use this).
void set_resolver(PyObject* callable, bool prefilter = true);   // borrowed; NULL clears
// `callable(filename)`: whether that file's loops are the user's (then the prefilter passes
// code with any for loop, not only code naming range); borrowed; NULL: only range.
void set_user_file(PyObject* callable);
void set_sweeper(PyObject* callable);

// The cached decision for a code object: None (no replacement), the replacement code,
// or NULL with no exception when the code object has not been seen yet.
PyObject* decision(PyObject* code);            // new reference or NULL
// Decide now (runs the resolver if needed). New reference: None or the replacement.
PyObject* decide(PyObject* code);
// Whether the bytecode-level prefilter sends this code object to the resolver.
bool has_candidates(PyObject* code);
// Decides the function's code and points the function at the replacement, if any.
// Returns 1 if retargeted, 0 if not (nothing to do or not possible; recorded).
int retarget(PyObject* func);

void set_quiet_threshold(long n);
void set_max_hook_depth(int n);
void request_rearm(const char* why);   // e.g. from tests
PyObject* stats();                     // new dict

}  // namespace stagepy::hook
