// Python int functions kernels call through the runtime (codegen.cpp): in, Python ints held
// as int64; out, CPython's result, or 0 where CPython must compute it (an error, or a case
// done here only by CPython), so that the statement goes to CPython.
#pragma once
#include <cstdint>

extern "C" {
// pow(a, b, m) of Python ints: (a ** b) % m with the sign of m, as CPython's long_pow
// gives it. Returns 0 for m == 0 (ValueError), b < 0 (a modular inverse, or ValueError),
// and m == INT64_MIN; else 1, with the result in *out.
int stagepy_powmod(int64_t a, int64_t b, int64_t m, int64_t* out);
}
