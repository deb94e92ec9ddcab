// STAGEPY_DEBUG: 1 prints the IR between passes (lifted, typed) to stderr; 2 adds the
// LLVM IR before and after optimization.
#pragma once
#include <cstdint>
#include <string>

namespace stagepy {

int debug_level();

// Forced hand-overs, for testing: when enabled (STAGEPY_DEBUG_BAIL=n, or set_debug_bail(n)),
// kernels compiled from then on decrement a counter at every statement and stop there when
// it reaches zero; the dispatcher sets it to a pseudo-random value in [1, n] before each
// call. Results must not change: every statement start is a legal place to hand over.
int64_t debug_bail_period();
void set_debug_bail(int64_t n);
int64_t* debug_bail_counter();
void debug_dump(const std::string& title, const std::string& text);

// CPython's "a signal arrived" flag (set by its C signal handler, cleared when the
// interpreter runs the Python handlers), or nullptr where unknown. Kernels read it at the
// top of `while` bodies and of loops that contain loops, and hand the statement to CPython
// when it is set, so Ctrl-C (and any Python signal handler) gets through.
const volatile int* interrupt_flag();
void set_interrupt_flag(const volatile int* flag);

}  // namespace stagepy
